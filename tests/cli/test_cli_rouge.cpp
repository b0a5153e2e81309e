// `strata eval rouge` run as a user would, on small generated JSONL files: the printed
// numbers against the library, the per-example file, and the error cases.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli.h"
#include <sstream>
#include <string>
#include <vector>

#include "strata/eval/bootstrap.h"
#include "strata/eval/rouge.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliRouge : public test_support::ScratchTest {
 protected:
  CliRouge() : ScratchTest("strata_cli_rouge") {}
  Result run(const std::string& args) { return ScratchTest::run("eval rouge " + args); }
};

// 30 pairs with inflections, punctuation and multi-line texts.
struct Pairs {
  std::vector<std::string> references, predictions;
  std::string jsonl;
};

Pairs make_pairs() {
  const std::vector<std::string> words{"the",  "runner", "running", "runs",  "dogs", "dog",
                                       "fast", "ran",    "quickly", "quick", "park", "in"};
  Pairs pairs;
  for (std::size_t i = 0; i < 30; ++i) {
    std::string reference, prediction;
    for (std::size_t k = 0; k < 8 + i % 5; ++k) {
      reference += words[(i * 7 + k * 3) % words.size()] + (k == 4 ? ".\n" : " ");
      prediction += words[(i * 5 + k * 2) % words.size()] + (k % 6 == 5 ? ",\n" : " ");
    }
    pairs.references.push_back(reference);
    pairs.predictions.push_back(prediction);
    pairs.jsonl +=
        nlohmann::json{{"prediction", prediction}, {"reference", reference}}.dump() + "\n";
  }
  return pairs;
}

TEST_F(CliRouge, JsonSummaryAndPerExampleMatchTheLibrary) {
  const Pairs pairs = make_pairs();
  const fs::path input = write("pairs.jsonl", pairs.jsonl);
  const fs::path per_example = dir_ / "scores.jsonl";
  const Result r = run("--pairs " + input.string() + " --stem --json --seed 5 --resamples 300" +
                       " --per-example " + per_example.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const RougeScorer scorer(std::vector<std::string>{"rouge1", "rouge2", "rougeL", "rougeLsum"},
                           true);
  const auto rows = scorer.score_batch(pairs.references, pairs.predictions);
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("count").get<int>(), 30);
  EXPECT_TRUE(summary.at("stemmed").get<bool>());
  EXPECT_EQ(summary.at("resamples").get<int>(), 300);
  for (std::size_t t = 0; t < scorer.types().size(); ++t) {
    std::vector<RougeScore> column;
    for (const auto& row : rows) column.push_back(row[t]);
    const RougeAggregate expected = bootstrap_aggregate(column, {300, 0.95, 5});
    const auto& got = summary.at("scores").at(scorer.types()[t].name());
    for (const auto& [measure, e] :
         {std::pair{"precision", expected.precision}, std::pair{"recall", expected.recall},
          std::pair{"fmeasure", expected.fmeasure}}) {
      SCOPED_TRACE(scorer.types()[t].name() + " " + measure);
      EXPECT_NEAR(got.at(measure).at("mean").get<double>(), e.mean, 1e-12);
      EXPECT_NEAR(got.at(measure).at("low").get<double>(), e.low, 1e-12);
      EXPECT_NEAR(got.at(measure).at("mid").get<double>(), e.mid, 1e-12);
      EXPECT_NEAR(got.at(measure).at("high").get<double>(), e.high, 1e-12);
    }
  }
  // The stemmed rouge1 F of pairs this close is far from zero.
  EXPECT_GT(summary["scores"]["rouge1"]["fmeasure"]["mean"].get<double>(), 0.2);

  std::istringstream lines(slurp(per_example));
  std::string line;
  std::size_t i = 0;
  for (; std::getline(lines, line); ++i) {
    const auto scores = nlohmann::json::parse(line);
    ASSERT_LT(i, rows.size());
    ASSERT_EQ(scores.size(), 4u);
    for (std::size_t t = 0; t < scorer.types().size(); ++t) {
      const auto& s = scores.at(scorer.types()[t].name());
      EXPECT_EQ(s.at("precision").get<double>(), rows[i][t].precision);
      EXPECT_EQ(s.at("recall").get<double>(), rows[i][t].recall);
      EXPECT_EQ(s.at("fmeasure").get<double>(), rows[i][t].fmeasure);
    }
  }
  EXPECT_EQ(i, 30u);
}

TEST_F(CliRouge, TypesSelectTheScores) {
  const fs::path input = write("pairs.jsonl", make_pairs().jsonl);
  const Result r = run("--pairs " + input.string() + " --types rouge3,rougeL --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto scores = nlohmann::json::parse(r.out).at("scores");
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_TRUE(scores.contains("rouge3"));
  EXPECT_TRUE(scores.contains("rougeL"));
}

TEST_F(CliRouge, HumanTable) {
  const fs::path input = write("pairs.jsonl", make_pairs().jsonl);
  const Result r = run("--pairs " + input.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ROUGE over 30 pairs, stemming off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rougeLsum  fmeasure"), std::string::npos) << r.out;
}

TEST_F(CliRouge, MissingFieldNamesFileLineAndFieldAndWritesNothing) {
  const fs::path input = write("pairs.jsonl",
                               "{\"prediction\": \"a\", \"reference\": \"a\"}\n"
                               "{\"prediction\": \"b\"}\n");
  const fs::path per_example = dir_ / "scores.jsonl";
  const Result r = run("--pairs " + input.string() + " --per-example " + per_example.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("pairs.jsonl:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'reference'"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(per_example));
}

// --against: a paired bootstrap of two systems on the same references. A system that copies
// the reference beats one that does not, with p = 0; the numbers are each system's mean F1.
TEST_F(CliRouge, AgainstTestsTwoSystemsOnTheSameReferences) {
  const Pairs pairs = make_pairs();
  std::string perfect, shifted;
  for (std::size_t i = 0; i < pairs.references.size(); ++i) {
    perfect += nlohmann::json{{"prediction", pairs.references[i]}, {"reference", pairs.references[i]}}.dump() + "\n";
    shifted += nlohmann::json{{"prediction", pairs.references[i]},
                              {"reference", pairs.references[(i + 1) % pairs.references.size()]}}.dump() + "\n";
  }
  const fs::path ours = write("perfect.jsonl", perfect), theirs = write("pairs.jsonl", pairs.jsonl);
  Result r = run("--pairs " + ours.string() + " --against " + theirs.string() + " --json --types rouge1,rouge2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  const nlohmann::json& paired = summary["against"]["paired_bootstrap"]["fmeasure"];
  EXPECT_DOUBLE_EQ(paired["rouge1"]["a"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(paired["rouge1"]["a"].get<double>(), summary["scores"]["rouge1"]["fmeasure"]["mean"].get<double>());
  EXPECT_LT(paired["rouge1"]["b"].get<double>(), 0.9);
  EXPECT_EQ(paired["rouge2"]["p_value"].get<double>(), 0.0);
  // The interval of A - B holds the observed difference and, with no resample against, not 0.
  const double difference = paired["rouge2"]["a"].get<double>() - paired["rouge2"]["b"].get<double>();
  EXPECT_GT(paired["rouge2"]["difference_low"].get<double>(), 0.0);
  EXPECT_LE(paired["rouge2"]["difference_low"].get<double>(), difference);
  EXPECT_GE(paired["rouge2"]["difference_high"].get<double>(), difference);
  // In the text table a p of 0 reads as below one in the 1,000 resamples, after the interval.
  r = run("--pairs " + ours.string() + " --against " + theirs.string() + " --types rouge2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("]    < 0.001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("A - B interval"), std::string::npos) << r.out;

  // The same system against itself: no resample shows a winner.
  r = run("--pairs " + ours.string() + " --against " + ours.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("paired bootstrap of mean F1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1.0000"), std::string::npos) << r.out;

  // Other references, line by line, are refused with the line that differs.
  r = run("--pairs " + ours.string() + " --against " + write("shifted.jsonl", shifted).string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("shifted.jsonl:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("same references"), std::string::npos) << r.err;
}

TEST_F(CliRouge, BadInputsFail) {
  const fs::path input = write("pairs.jsonl", make_pairs().jsonl);
  Result r = run("--pairs " + input.string() + " --types rouge1,rougeX");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("valid types: rouge1, rouge2"), std::string::npos) << r.err;

  r = run("--pairs " + write("bad.jsonl", "{\"prediction\": \"a\", \"reference\": 3}\n").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad.jsonl:1"), std::string::npos) << r.err;

  r = run("--pairs " + write("empty.jsonl", "").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no pairs"), std::string::npos) << r.err;

  r = run("--pairs " + input.string() + " --resamples 0");
  EXPECT_EQ(r.exit_code, 1);

  r = run("--pairs " + (dir_ / "absent.jsonl").string());
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace strata
