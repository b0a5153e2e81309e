// `strata eval hierarchy` run as a user would: the printed numbers against the library, the
// human table, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/eval/bleu.h"
#include "strata/eval/qs_hierarchy.h"
#include "strata/eval/rouge.h"
#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;

class CliHierarchy : public test_support::ScratchTest {
 protected:
  CliHierarchy() : ScratchTest("strata_cli_hierarchy") {}
  Result run(const std::string& args) { return ScratchTest::run("eval hierarchy " + args); }
};

struct TextPair {
  std::string prediction, reference;
};

// An exact copy, a flattened prediction, a partly right one and a malformed one.
const std::vector<TextPair> kPairs{
    {"Q1? cat dog [L↑] Q2? red sun [L-] Q3? big map", "Q1? cat dog [L↑] Q2? red sun [L-] Q3? big map"},
    {"Q1? cat dog [L-] Q2? red sun", "Q1? cat dog [L↑] Q2? red sun"},
    {"Q1? cat dog fox yak [L↑] Q2? red sun hat map [L↑] Q3? zip zap",
     "Q1? cat dog fox owl [L↑] Q2? red sun hat map"},
    {"[L↓] Q1? cat dog [L↑] [L↑] Q2? red sun", "Q1? cat dog [L↑] Q2? red sun [L↑] Q3? big map"},
};

std::string pairs_jsonl() {
  std::string text;
  for (const TextPair& p : kPairs)
    text.append(nlohmann::json{{"prediction", p.prediction}, {"reference", p.reference}}.dump()).append("\n");
  return text;
}

TEST_F(CliHierarchy, JsonMatchesTheLibrary) {
  const Result r = run("--pairs " + write("pairs.jsonl", pairs_jsonl()).string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  std::vector<HierarchyF1> scores;
  for (const TextPair& p : kPairs)
    scores.push_back(hierarchy_f1(parse_hierarchy(p.prediction), parse_hierarchy(p.reference)));
  const HierarchyF1 mean = mean_hierarchy_f1(scores);
  const auto got = nlohmann::json::parse(r.out);
  EXPECT_EQ(got.at("count").get<int>(), 4);
  EXPECT_DOUBLE_EQ(got.at("precision").get<double>(), mean.precision);
  EXPECT_DOUBLE_EQ(got.at("recall").get<double>(), mean.recall);
  EXPECT_DOUBLE_EQ(got.at("f1").get<double>(), mean.f1);
  // Per pair F1: 1, 0 (no generated edge), 41/72 (test_qs_hierarchy.cpp), 2/3 (1 of 2 edges).
  EXPECT_NEAR(mean.f1, (1 + 0 + 41.0 / 72 + 2.0 / 3) / 4, 1e-12);
  EXPECT_EQ(got.at("matched_edges").get<int>(), 2 + 1 + 1);
  EXPECT_TRUE(got.at("stemmed").get<bool>());
  EXPECT_DOUBLE_EQ(got.at("generated").at("pairs_per_hierarchy").get<double>(), (3 + 2 + 3 + 2) / 4.0);
  EXPECT_DOUBLE_EQ(got.at("reference").at("edges_per_hierarchy").get<double>(), (2 + 1 + 1 + 2) / 4.0);
  EXPECT_EQ(got.at("generated").at("malformed").get<int>(), 1);
  EXPECT_EQ(got.at("reference").at("malformed").get<int>(), 0);
}

TEST_F(CliHierarchy, QuestionBleuAndSummaryRougeMatchTheLibrary) {
  const Result r = run("--pairs " + write("pairs.jsonl", pairs_jsonl()).string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> questions;
  std::vector<std::vector<std::string>> references;
  double rouge_l = 0;
  const RougeScorer scorer({"rougeL"}, /*use_stemmer=*/true);
  for (const TextPair& p : kPairs) {
    const QsHierarchy generated = parse_hierarchy(p.prediction), reference = parse_hierarchy(p.reference);
    questions.push_back(questions_text(generated));
    references.push_back({questions_text(reference)});
    rouge_l += scorer.score_row(summaries_text(reference), summaries_text(generated))[0].fmeasure / kPairs.size();
  }
  EXPECT_EQ(questions[0], "Q1? Q2? Q3?");
  BleuOptions nltk;  // NLTK's corpus_bleu: whitespace tokens, no smoothing
  nltk.tokenize = BleuTokenize::kNone;
  nltk.smooth = BleuSmooth::kNone;
  const auto got = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(got.at("question_bleu_nltk").at("score").get<double>(), corpus_bleu(questions, references, nltk).score);
  EXPECT_DOUBLE_EQ(got.at("question_bleu_sacrebleu").at("score").get<double>(), corpus_bleu(questions, references).score);
  // By hand: the generated questions are 10 whitespace tokens (Q1? Q2? Q3? | Q1? Q2? | Q1? Q2? Q3? | Q1? Q2?)
  // and only the third pair's "Q3?" is missing from its reference; 13a splits off the "?": 18 of 20.
  EXPECT_DOUBLE_EQ(got.at("question_bleu_nltk").at("precisions")[0].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(got.at("question_bleu_sacrebleu").at("precisions")[0].get<double>(), 90.0);
  EXPECT_EQ(got.at("question_bleu_nltk").at("sys_len").get<int>(), 10);
  EXPECT_EQ(got.at("question_bleu_sacrebleu").at("sys_len").get<int>(), 20);
  EXPECT_DOUBLE_EQ(got.at("summary_rouge").at("rougeL").get<double>(), rouge_l);
}

TEST_F(CliHierarchy, HumanTable) {
  const Result r = run("--pairs " + write("pairs.jsonl", pairs_jsonl()).string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Hierarchy F1 over 4 pairs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("precision"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("QS pairs per hierarchy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("malformed (parse repaired)            1          0"), std::string::npos)
      << r.out;
}

TEST_F(CliHierarchy, BadInputNamesFileAndLine) {
  Result r = run("--pairs " +
                 write("broken.jsonl", pairs_jsonl().append("{\"prediction\": \"Q? A\",\n")).string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("broken.jsonl:5: malformed JSON"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  r = run("--pairs " + write("no_ref.jsonl", "{\"prediction\": \"Q? A\"}\n").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no_ref.jsonl:1: field 'reference': missing"), std::string::npos) << r.err;

  r = run("--pairs " + write("empty.jsonl", "").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no pairs"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
