#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "strata/core/files.h"
#include "strata/core/error.h"
#include "strata/doc/document.h"
#include "strata/doc/markdown.h"

namespace strata {
namespace {

using Texts = std::vector<std::string>;

Texts paragraphs(const Document& doc, const Section& section) {
  Texts out;
  for (const Paragraph& p : section.paragraphs) out.emplace_back(doc.slice(p.span));
  return out;
}

Texts sentences(const Document& doc, const Paragraph& paragraph) {
  Texts out;
  for (Span s : paragraph.sentences) out.emplace_back(doc.slice(s));
  return out;
}

class GuideMarkdown : public ::testing::Test {
 protected:
  void SetUp() override {
    doc = parse_markdown(read_file(std::filesystem::path(STRATA_FIXTURES_DIR) / "doc" / "guide.md"));
  }
  Document doc;
};

TEST_F(GuideMarkdown, TitleAndTree) {
  EXPECT_EQ(doc.title, "Guide Title");
  EXPECT_TRUE(doc.root.paragraphs.empty());  // front matter dropped
  ASSERT_EQ(doc.root.children.size(), 2u);
  const Section& guide = doc.root.children[0];
  EXPECT_EQ(guide.heading, "Guide Title");  // closing #s stripped
  EXPECT_EQ(guide.level, 1);
  ASSERT_EQ(guide.children.size(), 1u);
  EXPECT_EQ(guide.children[0].heading, "Install");
  EXPECT_EQ(guide.children[0].level, 2);
  ASSERT_EQ(guide.children[0].children.size(), 1u);
  const Section& deep = guide.children[0].children[0];
  EXPECT_EQ(deep.heading, "Deep Note");  // rank 4 under rank 2: one level deeper
  EXPECT_EQ(deep.level, 3);
  const Section& setext = doc.root.children[1];
  EXPECT_EQ(setext.heading, "Setext Heading");
  EXPECT_EQ(setext.level, 1);
  ASSERT_EQ(setext.children.size(), 1u);
  EXPECT_EQ(setext.children[0].heading, "Sub Setext");
  EXPECT_EQ(setext.children[0].level, 2);
  EXPECT_EQ(doc.section_count(), 5u);
}

TEST_F(GuideMarkdown, InlineMarkupIsStripped) {
  const Section& guide = doc.root.children[0];
  EXPECT_EQ(paragraphs(doc, guide), Texts{"Intro with emphasis, strong, code, and a link.\nIt continues here."});
  EXPECT_EQ(sentences(doc, guide.paragraphs[0]),
            (Texts{"Intro with emphasis, strong, code, and a link.", "It continues here."}));
  EXPECT_EQ(paragraphs(doc, guide.children[0]), Texts{"Run the installer. Then reboot."});
  EXPECT_EQ(sentences(doc, guide.children[0].paragraphs[0]), (Texts{"Run the installer.", "Then reboot."}));
}

TEST_F(GuideMarkdown, ListsQuotesAndCode) {
  const Section& sub = doc.root.children[1].children[0];
  EXPECT_EQ(paragraphs(doc, sub),
            (Texts{"- first item\n- second item. With two sentences\ncontinued line\n- third item",
                   "1. one\n2. two",
                   "Quoted text here.\nMore quote.",
                   "A second quoted paragraph.",
                   "# not a heading\necho \"hi\"",
                   "## also not a heading",
                   "# indented code, not a heading\nsecond code line",
                   "Final: snake_case_name, 2 * 3, a logo, https://example.org, *literal*."}));
  // Each list item starts a sentence.
  EXPECT_EQ(sentences(doc, sub.paragraphs[0]),
            (Texts{"- first item", "- second item.", "With two sentences\ncontinued line", "- third item"}));
  EXPECT_EQ(sentences(doc, sub.paragraphs[1]), (Texts{"1. one", "2. two"}));
}

TEST(Markdown, TitleOnlyWhenTheDocumentStartsWithALevelOneHeading) {
  EXPECT_EQ(parse_markdown("Intro.\n\n# Later\n").title, "");
  EXPECT_EQ(parse_markdown("## Two\n\n# One\n").title, "");
  EXPECT_EQ(parse_markdown("\n\nTitle\n=====\ntext\n").title, "Title");
}

TEST(Markdown, AtxHeadingRules) {
  const Document doc = parse_markdown("#hashtag is text\n\n###### Six ######\n\n####### seven is text\n\n    # code\n");
  EXPECT_EQ(doc.root.paragraphs.size(), 1u);
  EXPECT_EQ(doc.slice(doc.root.paragraphs[0].span), "#hashtag is text");
  ASSERT_EQ(doc.root.children.size(), 1u);
  EXPECT_EQ(doc.root.children[0].heading, "Six");
  EXPECT_EQ(paragraphs(doc, doc.root.children[0]), (Texts{"####### seven is text", "# code"}));
  EXPECT_EQ(parse_markdown("# C# #\n").root.children.at(0).heading, "C#");
}

TEST(Markdown, SetextNeedsAParagraphAndThematicBreaksVanish) {
  const Document doc = parse_markdown("---\n\ntext\n\n***\n\nmore\n");
  EXPECT_EQ(doc.section_count(), 0u);
  EXPECT_EQ(paragraphs(doc, doc.root), (Texts{"text", "more"}));
  const Document two = parse_markdown("Two line\nheading\n---\nbody\n");
  ASSERT_EQ(two.root.children.size(), 1u);
  EXPECT_EQ(two.root.children[0].heading, "Two line heading");
}

TEST(Markdown, EmphasisPairsOnly) {
  const Document doc = parse_markdown("a *b* __c__ ~~d~~ _e_ ***f*** x*y*z 5 * 3 snake_case_name\n");
  EXPECT_EQ(doc.text, "a b c d e f xyz 5 * 3 snake_case_name");
  EXPECT_EQ(parse_markdown("all *.txt files").text, "all *.txt files");
  EXPECT_EQ(parse_markdown("an un*paired star").text, "an un*paired star");
  EXPECT_EQ(parse_markdown("~single~ tilde").text, "~single~ tilde");
}

TEST(Markdown, LinksImagesCodeAndEscapes) {
  const Document doc = parse_markdown(
      "[a](u) [b][ref] ![c](i.png) [not a link] `*kept*` ``a ` b`` \\[x\\] <a@b.c> < not >\n");
  EXPECT_EQ(doc.text, "a b c [not a link] *kept* a ` b [x] a@b.c < not >");
}

TEST(Markdown, BracketsMatchAcrossNestingAndEscapes) {
  EXPECT_EQ(parse_markdown("[[[ [a](u) ((").text, "[[[ a ((");
  EXPECT_EQ(parse_markdown("[x [y] z](u) [p](q (r) s) \\[t](v)").text, "x [y] z p [t](v)");
  // Thousands of unclosed brackets stay literal (and are matched in one pass).
  const std::string many(20000, '[');
  EXPECT_EQ(parse_markdown(many + " [end](u)").text, many + " end");
}

TEST(Markdown, UnclosedFenceRunsToTheEnd) {
  const Document doc = parse_markdown("```\n# inside\n\nstill inside\n");
  EXPECT_EQ(doc.section_count(), 0u);
  EXPECT_EQ(paragraphs(doc, doc.root), Texts{"# inside\n\nstill inside"});
}

TEST(Markdown, CrLfAndEmptyInput) {
  EXPECT_TRUE(parse_markdown("").empty());
  EXPECT_TRUE(parse_markdown("\n\n  \n").empty());
  const Document doc = parse_markdown("# T\r\n\r\nBody.\r\n");
  EXPECT_EQ(doc.title, "T");
  EXPECT_EQ(doc.text, "Body.");
}

TEST(Markdown, AMillionSectionsAreRefusedBeforeTheyTakeTheMemory) {
  std::string text;
  for (std::size_t i = 0; i <= DocumentBuilder::kMaxSections; ++i) text += "# h\n";
  try {
    parse_markdown(text);
    FAIL() << "a document of more than kMaxSections sections was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 100000 sections"), std::string::npos) << e.what();
  }
  text.resize(text.size() - 4);  // exactly the limit: read
  EXPECT_EQ(parse_markdown(text).root.children.size(), DocumentBuilder::kMaxSections);
}

}  // namespace
}  // namespace strata
