#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/doc/manpage.h"
#include "doc_test_util.h"

namespace strata {
namespace {

using test::kDocData;
using test::paragraph_texts;

std::vector<std::string> sentence_texts(const Document& doc, const Paragraph& paragraph) {
  std::vector<std::string> out;
  for (Span s : paragraph.sentences) out.emplace_back(doc.slice(s));
  return out;
}

const Section& child(const Section& parent, std::string_view heading) {
  for (const Section& c : parent.children)
    if (c.heading == heading) return c;
  throw std::runtime_error("no section " + std::string(heading));
}

// Renders one roff body (after a minimal .TH) and returns the text of the document.
std::string render_man(std::string_view body) {
  const std::string roff = ".TH T 1\n.SH S\n" + std::string(body);
  return parse_manpage(roff, "t.1").document.text;
}

class WidgetPage : public ::testing::Test {
 protected:
  void SetUp() override { page = read_manpage(kDocData / "widget.7"); }
  ManPage page;
  const Document& doc() const { return page.document; }
};

TEST_F(WidgetPage, TitleNameAndDescription) {
  EXPECT_EQ(page.name, "widget");  // .TH says WIDGET; the file name spells it as typed
  EXPECT_EQ(page.section, "7");
  EXPECT_EQ(doc().title, "widget(7)");
  EXPECT_EQ(doc().id, "widget.7");
  EXPECT_EQ(page.name_line, "widget - exercise the roff parser");
  EXPECT_EQ(page.description, "exercise the roff parser");
  EXPECT_TRUE(page.alias_of.empty());
}

TEST_F(WidgetPage, SectionTree) {
  std::vector<std::string> top;
  for (const Section& s : doc().root.children) {
    top.push_back(s.heading);
    EXPECT_EQ(s.level, 1) << s.heading;
  }
  EXPECT_EQ(top, (std::vector<std::string>{"NAME", "SYNOPSIS", "DESCRIPTION", "EXAMPLES", "NOTES",
                                           "ESCAPES", "LINKS", "CONDITIONS", "TABLE", "UNKNOWN"}));
  const Section& description = child(doc().root, "DESCRIPTION");
  ASSERT_EQ(description.children.size(), 2u);
  EXPECT_EQ(description.children[0].heading, "Options");
  EXPECT_EQ(description.children[0].level, 2);
  EXPECT_EQ(description.children[1].heading, "Fonts");
  EXPECT_TRUE(doc().root.paragraphs.empty());
}

TEST_F(WidgetPage, FontsAndParagraphMacros) {
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "SYNOPSIS")),
            std::vector<std::string>{"widget [-a|--all] [file...]"});
  const Section& description = child(doc().root, "DESCRIPTION");
  EXPECT_EQ(paragraph_texts(doc(), description),
            (std::vector<std::string>{"The widget page reads files and writes nothing. It is a test, e.g. for the parser.",
                                      "Second paragraph.", "Third paragraph.", "Fourth paragraph."}));
  EXPECT_EQ(sentence_texts(doc(), description.paragraphs[0]),
            (std::vector<std::string>{"The widget page reads files and writes nothing.",
                                      "It is a test, e.g. for the parser."}));
  EXPECT_EQ(paragraph_texts(doc(), child(description, "Fonts")),
            std::vector<std::string>{"--file=name and x.y then italicroman and SMALL and BOLDSMALL end."});
}

TEST_F(WidgetPage, TaggedAndIndentedParagraphs) {
  const Section& options = child(child(doc().root, "DESCRIPTION"), "Options");
  EXPECT_EQ(paragraph_texts(doc(), options),
            (std::vector<std::string>{"-a, --all  do not ignore entries starting with .",
                                      "-v, --verbose  be verbose. Very verbose.",
                                      "-q, --quiet  say nothing.", "\u2022  a bullet item",
                                      "an untagged indented paragraph"}));
  EXPECT_EQ(sentence_texts(doc(), options.paragraphs[0]),
            std::vector<std::string>{"-a, --all  do not ignore entries starting with ."});
  EXPECT_EQ(sentence_texts(doc(), options.paragraphs[1]),
            (std::vector<std::string>{"-v, --verbose  be verbose.", "Very verbose."}));
}

TEST_F(WidgetPage, NoFillBlocksBreaksAndHeadingOnNextLine) {
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "EXAMPLES")),
            (std::vector<std::string>{"$ widget -a\n# not a heading", "Text after the example.",
                                      "int main(void);"}));
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "NOTES")),
            (std::vector<std::string>{"Line one\nline two.", "After space."}));
}

TEST_F(WidgetPage, Escapes) {
  const Section& escapes = child(doc().root, "ESCAPES");
  ASSERT_EQ(escapes.paragraphs.size(), 1u);
  EXPECT_EQ(sentence_texts(doc(), escapes.paragraphs[0]),
            (std::vector<std::string>{
                "Dashes - \u2014 \u2013; quotes \u201cx\u201d 'y'; \\ and \\; nothing; a b c.",
                "Glyphs \u00a9 \u00ae \u2122 \u00d7 \u2264 \u2265 \u2022 \u00e9 A \u2014.",
                "Sizes big done; strings \u201cq\u201d \u00ae Widget Widget.",
                "Unknown  and  glyphs.",  // unknown glyphs are dropped
                "Visible text Join this line."}));
}

TEST_F(WidgetPage, LinksConditionsMacrosTablesAndUnknownMacros) {
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "LINKS")),
            std::vector<std::string>{
                "the widget home page. Mail dev@example.com, or https://example.org."});
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "CONDITIONS")),
            (std::vector<std::string>{"Shown for nroff. Branch n.", "macro body"}));
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "TABLE")),
            std::vector<std::string>{"alpha  one\nbeta  two"});
  EXPECT_EQ(paragraph_texts(doc(), child(doc().root, "UNKNOWN")),
            std::vector<std::string>{"kept as text"});
  EXPECT_EQ(page.unknown_macros, 2u);
  EXPECT_EQ(doc().text.find("ignored"), std::string::npos);
  EXPECT_EQ(doc().text.find("Hidden"), std::string::npos);
}

TEST(ManPage, SoPageIsAnAliasWithAnEmptyDocument) {
  const ManPage page = read_manpage(kDocData / "alias.3");
  EXPECT_EQ(page.alias_of, "man3/real.3");
  EXPECT_TRUE(page.document.empty());
  EXPECT_EQ(page.document.title, "alias(3)");
  EXPECT_EQ(page.name, "alias");
  EXPECT_EQ(page.section, "3");
}

TEST(ManPage, HeadingForms) {
  const ManPage page = parse_manpage(
      ".TH x 1\n.SH \"SEE ALSO\"\na\n.SH\nNEXT LINE\nb\n.SH TWO WORDS\nc\n.SS \"Sub one\"\nd\n", "x.1");
  const Section& root = page.document.root;
  ASSERT_EQ(root.children.size(), 3u);
  EXPECT_EQ(root.children[0].heading, "SEE ALSO");
  EXPECT_EQ(root.children[1].heading, "NEXT LINE");
  EXPECT_EQ(root.children[2].heading, "TWO WORDS");
  ASSERT_EQ(root.children[2].children.size(), 1u);
  EXPECT_EQ(root.children[2].children[0].heading, "Sub one");
  EXPECT_EQ(page.document.slice(root.children[1].paragraphs.at(0).span), "b");
}

TEST(ManPage, NameAndSectionFromFileWithoutTH) {
  const ManPage page = parse_manpage(".SH NAME\nfoo \\- do foo things\n", "/x/man3/foo.3pm.gz");
  EXPECT_EQ(page.name, "foo");
  EXPECT_EQ(page.section, "3pm");
  EXPECT_EQ(page.document.title, "foo(3pm)");
  EXPECT_EQ(page.description, "do foo things");
}

TEST(ManPage, THNameDifferentFromTheFileWins) {
  const ManPage page = parse_manpage(".TH bar 5\n", "foo.1");
  EXPECT_EQ(page.document.title, "bar(5)");
}

TEST(ManPage, TruncatedEscapesNeverReadPastTheEnd) {
  // Every prefix of a line dense with escapes must parse.
  const std::string nasty =
      "a\\fB\\f(CW\\f[I]\\s+2\\s(12\\s[3]\\s'4'\\N'65'\\C'em'\\(em\\[u00E9]\\*(lq\\*[x]\\h'1i'"
      "\\w|x|\\n(.g\\n[x]\\kx\\m[red]\\$1\\e\\&\\c";
  for (std::size_t n = 0; n <= nasty.size(); ++n) {
    const std::string body = nasty.substr(0, n) + "\n";
    EXPECT_NO_THROW(render_man(body)) << body;
  }
  EXPECT_EQ(render_man("end\\\n"), "end");  // a continuation at the end of input
  EXPECT_EQ(render_man("x\\f"), "x");
  EXPECT_EQ(render_man("x\\(e"), "x");
  EXPECT_EQ(render_man("x\\[unterminated"), "x");
  EXPECT_EQ(render_man("x\\N'12"), "x");
  EXPECT_EQ(render_man("x\\N'0' \\N'55296' \\N'99999999' y"), "x   y");  // NUL, a surrogate, too large
  EXPECT_EQ(render_man("x\\"), "x");
}

TEST(ManPage, ControlLinesAndOddInput) {
  EXPECT_EQ(render_man("'B quoted control\n.  B  spaced\n.\nplain\n"), "quoted control spaced plain");
  EXPECT_EQ(render_man(".B \"a \"\"quoted\"\" arg\" b\n"), "a \"quoted\" arg b");
  EXPECT_EQ(render_man("long \\\nline\n"), "long line");
  EXPECT_EQ(render_man(".BR\n.IP\n.TP\n.UE\n.ds\n.de\n"), "");
  EXPECT_EQ(render_man("\\&.starts with a dot\n"), ".starts with a dot");
  EXPECT_EQ(render_man("a\r\nb\r\n"), "a b");
  EXPECT_EQ(render_man(".EQ\nx sup 2\n.EN\nafter\n.PS\nbox\n.PE\nend\n"), "after end");
  // A .de without its end swallows the rest; a conditional block without \} skips it.
  EXPECT_EQ(render_man("x\n.de M\ny\n"), "x");
  EXPECT_EQ(render_man("x\n.if t \\{\ny\n"), "x");
  // A self-recursive macro stops at the expansion depth limit.
  const std::string recursive = render_man(".de R\nr\n.R\n..\n.R\n");
  EXPECT_FALSE(recursive.empty());
  EXPECT_EQ(recursive.find_first_not_of("r "), std::string::npos);
}

TEST(ManPage, InvalidUtf8IsSanitized) {
  const std::string text = render_man("caf\xe9 \xff ok\n");
  EXPECT_EQ(text, "caf\uFFFD \uFFFD ok");
}

TEST(ManPage, UnknownMacrosAreCountedAndKept) {
  const ManPage page = parse_manpage(".TH x 1\n.SH A\n.Foo bar \"baz qux\"\n.Bar\n.Zap zip\n", "x.1");
  EXPECT_EQ(page.unknown_macros, 3u);
  EXPECT_EQ(page.document.text, "bar baz qux zip");
}

TEST(ManPage, MissingFileIsAnError) {
  try {
    read_manpage(kDocData / "no-such-page.1");
    FAIL() << "expected strata::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-page.1"), std::string::npos) << e.what();
  }
}

// Installed pages (package manpages): real roff from several generators.
TEST(ManPage, InstalledLsPage) {
  const std::filesystem::path path = "/usr/share/man/man1/ls.1.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not installed";
  const ManPage page = read_manpage(path);
  EXPECT_EQ(page.document.title, "ls(1)");
  EXPECT_EQ(page.name_line, "ls - list directory contents");
  EXPECT_EQ(page.description, "list directory contents");
  EXPECT_EQ(page.unknown_macros, 0u);
  EXPECT_EQ(page.document.text.find('\\'), std::string::npos);  // no escape left behind
  const Section& description = child(page.document.root, "DESCRIPTION");
  bool found = false;
  for (const std::string& p : paragraph_texts(page.document, description))
    found = found || p == "-a, --all  do not ignore entries starting with .";
  EXPECT_TRUE(found);
}

TEST(ManPage, InstalledPagesHaveNameAndStructure) {
  for (const char* file : {"/usr/share/man/man7/man-pages.7.gz", "/usr/share/man/man1/grep.1.gz",
                           "/usr/share/man/man1/bash.1.gz", "/usr/share/man/man1/perl.1.gz"}) {
    if (!std::filesystem::exists(file)) {
      std::printf("skipping %s: not installed\n", file);
      continue;
    }
    const ManPage page = read_manpage(file);
    EXPECT_FALSE(page.description.empty()) << file;
    EXPECT_EQ(page.document.root.children.at(0).heading, "NAME") << file;
    EXPECT_GE(page.document.section_count(), 4u) << file;
    EXPECT_GE(page.document.sentence_count(), 20u) << file;
  }
}

TEST(ManPage, AMacroThatCallsItselfIsRefusedBeforeItExpandsExponentially) {
  // Each expansion calls the macro twice: 2^16 expansions within the depth limit, each one
  // line, unless the total is capped (found by the manpage fuzz target).
  const std::string roff = ".TH LOOP 1\n.SH NAME\nloop \\- twice\n.de Tw\n.Tw\n.Tw\nx\n..\n.Tw\n";
  try {
    parse_manpage(roff, "loop.1");
    FAIL() << "the page expanded without limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("loop.1: its macros expand to more than 200000 lines"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata
