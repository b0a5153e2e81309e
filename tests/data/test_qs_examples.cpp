// Seed 001's QS generation tasks as seq2seq samples (Task I: root question + document →
// the linearised hierarchy from the root's summary; Task II: a pair + document → its
// children's questions), and QS hierarchies built from a man page's section tree.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/data/manpage_qs.h"
#include "strata/data/qs_examples.h"
#include "strata/doc/dataset.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

using test_support::error_of;
using test_support::WordTokenizer;

QsNode qs(std::string question, std::string summary, std::vector<QsNode> children = {}) {
  return {std::move(question), std::move(summary), std::move(children)};
}

// A document with a root paragraph and one section, and the hierarchy
// Q1 -> {Q1.1, Q1.2 -> {Q1.2.1}}, Q2.
QsExample example() {
  QsExample e;
  e.id = "hud";
  e.document = build_document("Report", {{0, "Intro text."}, {1, "Funding"}, {0, "Money was spent."}});
  e.hierarchy.roots = {qs("Q1?", "A1", {qs("Q1.1?", "A1.1"), qs("Q1.2?", "A1.2", {qs("Q1.2.1?", "A1.2.1")})}),
                       qs("Q2?", "A2")};
  return e;
}

TEST(QsSamples, TaskOneIsOneSamplePerTopLevelPairStartingWithItsSummary) {
  const std::vector<QsSample> samples = qs_samples(example(), QsTask::Hierarchy);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].id, "hud#1");
  EXPECT_EQ(samples[0].target, "A1 [L↑] Q1.1? A1.1 [L-] Q1.2? A1.2 [L↑] Q1.2.1? A1.2.1");
  EXPECT_EQ(samples[1].id, "hud#2");
  EXPECT_EQ(samples[1].target, "A2");
  // The question is the root's first paragraph; the document's tree is kept below it.
  const Document& source = samples[0].source;
  EXPECT_EQ(source.text, "Q1?\n\nIntro text.\n\nMoney was spent.");
  ASSERT_EQ(source.root.paragraphs.size(), 2u);
  EXPECT_EQ(source.slice(source.root.paragraphs[0].span), "Q1?");
  ASSERT_EQ(source.root.children.size(), 1u);
  EXPECT_EQ(source.root.children[0].heading, "Funding");
  EXPECT_EQ(source.slice(source.root.children[0].paragraphs[0].span), "Money was spent.");
  // Read back, the target is the subtree with the root's question left out.
  QsHierarchy expected{{example().hierarchy.roots[0]}};
  expected.roots[0].question.clear();
  EXPECT_EQ(parse_hierarchy(samples[0].target), expected);
}

TEST(QsSamples, TaskTwoIsOneSamplePerPairWithChildren) {
  const std::vector<QsSample> samples = qs_samples(example(), QsTask::ChildQuestions);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].id, "hud#1");
  EXPECT_EQ(samples[0].target, "Q1.1? Q1.2?");
  EXPECT_EQ(samples[0].source.slice(samples[0].source.root.paragraphs[0].span), "Q1? A1");
  EXPECT_EQ(samples[1].id, "hud#1.2");
  EXPECT_EQ(samples[1].target, "Q1.2.1?");
  EXPECT_EQ(samples[1].source.slice(samples[1].source.root.paragraphs[0].span), "Q1.2? A1.2");
}

TEST(QsSamples, TaskNames) {
  EXPECT_EQ(qs_task_from_name("hierarchy"), QsTask::Hierarchy);
  EXPECT_EQ(qs_task_from_name("child_questions"), QsTask::ChildQuestions);
  EXPECT_STREQ(qs_task_name(QsTask::ChildQuestions), "child_questions");
  EXPECT_NE(error_of([] { qs_task_from_name("childq"); }).find("data.qs_task"), std::string::npos);
}

class QsExamplesFile : public testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("strata_qs_examples_" + std::to_string(::getpid()) + ".jsonl");
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_;
};

TEST_F(QsExamplesFile, LoadsTokenizedSamplesWithUntruncatedReferences) {
  std::ofstream(path_) << qs_example_json(example()).dump() << "\n";
  const WordTokenizer tokenizer;
  TruncationOptions options;
  options.max_target_tokens = 4;  // eos included: the targets are cut, the references are not
  const std::vector<Seq2SeqExample> examples = load_qs_examples(path_, tokenizer, options, QsTask::Hierarchy, false);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].id, "hud#1");
  EXPECT_EQ(examples[0].reference, "A1 [L↑] Q1.1? A1.1 [L-] Q1.2? A1.2 [L↑] Q1.2.1? A1.2.1");
  EXPECT_EQ(tokenizer.decode(examples[0].target), "A1 [L↑] Q1.1? </s>");
  EXPECT_EQ(examples[1].reference, "A2");
  // The source starts with the question's token.
  EXPECT_EQ(examples[0].source.token[0], *tokenizer.piece_to_id("Q1?"));
}

TEST_F(QsExamplesFile, NoSampleIsAnErrorNamingTheFile) {
  QsExample flat = example();
  flat.hierarchy.roots = {qs("Q?", "A")};
  std::ofstream(path_) << qs_example_json(flat).dump() << "\n";
  const WordTokenizer tokenizer;
  EXPECT_EQ(error_of([&] { load_qs_examples(path_, tokenizer, {}, QsTask::ChildQuestions, false); }),
            path_.string() + ": no child_questions sample in 1 examples (Task II needs QS pairs with children)");
}

// A man page as `strata data manpages` reads it: NAME line as summary, sections below.
Document page() {
  Document d = build_document("ls", {{1, "SYNOPSIS"},
                                     {0, "ls [OPTION]... [FILE]..."},
                                     {1, "DESCRIPTION"},
                                     {0, "Short. List information about the FILEs in the current directory."},
                                     {2, "Sorting"},
                                     {0, "Entries are sorted alphabetically by default."},
                                     {1, "OPTIONS"},
                                     {0, "-a"},
                                     {1, "Colour Output"},
                                     {0, "Colours depend on the LS_COLORS variable and the terminal."},
                                     {1, "SEE ALSO"},
                                     {0, "dir(1), vdir(1) and the full manual."}});
  d.id = "ls(1)";
  d.summary = "list directory contents";
  return d;
}

TEST(ManpageQs, SectionTreeGivesTheHierarchy) {
  EXPECT_EQ(manpage_name("ls(1)"), "ls");
  EXPECT_EQ(manpage_name("CA.pl(1SSL)"), "CA.pl");
  ManpageQsOptions options;
  options.max_summary_words = 6;
  const std::optional<QsExample> e = manpage_qs_example(page(), "ls", options);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->id, "ls(1)");
  // SYNOPSIS and SEE ALSO are dropped; OPTIONS has no sentence of 4 words and no
  // subsection, so it is dropped too; "Short." is under 4 words.
  const QsHierarchy expected{{qs("What is ls?", "list directory contents",
                                 {qs("What does ls do?", "List information about the FILEs in",
                                     {qs("What about Sorting?", "Entries are sorted alphabetically by default.")}),
                                  qs("What about colour output in ls?", "Colours depend on the LS_COLORS variable")})}};
  EXPECT_EQ(e->hierarchy, expected);
  // The document: the kept sections, each with its heading as its first paragraph.
  EXPECT_EQ(e->document.text,
            "DESCRIPTION\n\nShort. List information about the FILEs in the current directory.\n\nSorting\n\n"
            "Entries are sorted alphabetically by default.\n\nColour Output\n\n"
            "Colours depend on the LS_COLORS variable and the terminal.");
  ASSERT_EQ(e->document.root.children.size(), 2u);
  EXPECT_EQ(e->document.root.children[0].children.size(), 1u);
}

TEST(ManpageQs, TooFewSectionsOrNoNameLineGiveNoExample) {
  ManpageQsOptions options;
  options.min_sections = 3;
  EXPECT_FALSE(manpage_qs_example(page(), "ls", options).has_value());
  Document nameless = page();
  nameless.summary = " ";
  EXPECT_FALSE(manpage_qs_example(nameless, "ls").has_value());
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(ManpageQs, ABadSplitLeavesNoFileBehind) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("strata_manpage_qs_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "corpus");
  Document d = page();
  std::ofstream(dir / "corpus/train.jsonl") << to_native_json(d).dump() << "\n";
  // validation.jsonl is missing: nothing may be written, not even the good train split.
  EXPECT_NE(error_of([&] { build_manpage_qs(dir / "corpus", dir / "out"); }).find("validation.jsonl"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "out/train.jsonl"));
  std::ofstream(dir / "corpus/validation.jsonl") << to_native_json(d).dump() << "\n";
  std::ofstream(dir / "corpus/test.jsonl") << to_native_json(d).dump() << "\n";
  const nlohmann::ordered_json stats = build_manpage_qs(dir / "corpus", dir / "out");
  EXPECT_EQ(stats["test"]["examples"], 1);
  EXPECT_DOUBLE_EQ(stats["test"]["pairs_mean"].get<double>(), 4.0);  // root, 2 sections, 1 subsection
  EXPECT_EQ(load_qs_hierarchies(dir / "out/train.jsonl").size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata
