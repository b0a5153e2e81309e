// `strata train` with data.task=segmentation and `strata segment` run as a user would: a tiny
// Cross-Segment BERT on generated documents with sections, its scores beside the peers, and
// the files it writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliSegment : public ::testing::Test {
 protected:
  // Native-form documents of 3 sections of 2 or 3 sentences each, every section drawing its
  // words from a topic of its own. Per document: 8 sentences on average, so 7 candidates of
  // which 2 are boundaries.
  static void write_dataset(const fs::path& path, int documents, std::uint32_t seed) {
    const char* topics[3][6] = {{"list", "files", "directory", "contents", "show", "tree"},
                                {"network", "socket", "address", "port", "route", "packet"},
                                {"user", "password", "group", "login", "shell", "account"}};
    std::uint32_t state = seed;
    auto next = [&](std::uint32_t n) { return state = state * 1103515245u + 12345u, (state >> 16) % n; };
    std::ofstream out(path);
    for (int d = 0; d < documents; ++d) {
      nlohmann::json sections = nlohmann::json::array();
      for (int s = 0; s < 3; ++s) {
        const int topic = (d + s) % 3;
        std::string paragraph;
        for (std::uint32_t k = 0, n = 2 + next(2); k < n; ++k) {
          std::string sentence = "The";
          for (int w = 0; w < 5; ++w) sentence += std::string(" ") + topics[topic][next(6)];
          paragraph += sentence + ". ";
        }
        sections.push_back({{"heading", "Part " + std::to_string(s)}, {"paragraphs", {paragraph}}});
      }
      out << nlohmann::json{{"id", "doc" + std::to_string(d)}, {"sections", sections}, {"summary", "x"}}.dump()
          << "\n";
    }
    out << nlohmann::json{{"id", "short"}, {"document", "Only one sentence."}, {"summary", "x"}}.dump() << "\n";
  }

  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_segment_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_dataset(dir_ / "train.jsonl", 24, 7);
    write_dataset(dir_ / "valid.jsonl", 5, 11);
    ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("tok") +
                  " --vocab-size 300 --type byte-bpe")
                  .exit_code,
              0);
    trained_ = run("train --quiet --out " + path("run") + " model.architecture=encoder model.head=sequence" +
                   " data.task=segmentation segment.context_tokens=16 model.d_model=32 model.heads=2" +
                   " model.d_ff=64 model.encoder_layers=1 model.max_positions=64 data.train=" + path("train.jsonl") +
                   " data.valid=" + path("valid.jsonl") + " data.tokenizer=" + path("tok") +
                   " train.max_steps=6 train.warmup_steps=2 train.eval_every=3 train.eval_docs=20" +
                   " train.max_tokens=1024 train.threads=1");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult trained_;
};
fs::path CliSegment::dir_;
CliResult CliSegment::trained_;

TEST_F(CliSegment, TrainingLogsBoundaryPrecisionRecallAndF1) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  EXPECT_NE(trained_.out.find("stopped after 6 steps"), std::string::npos) << trained_.out;
  const std::string metrics = slurp(dir_ / "run/metrics.jsonl");
  for (const char* key : {"\"precision\"", "\"recall\"", "\"f1\""}) EXPECT_NE(metrics.find(key), std::string::npos) << key;
}

TEST_F(CliSegment, ScoresEveryCandidateBesideThePeersAndWritesFiles) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult result = run("segment --quiet --model " + path("run") + " --data " + path("valid.jsonl") +
                               " --json " + path("scores.json") + " --out " + path("preds.jsonl"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* row : {"model", "all boundaries", "random at the base rate"})
    EXPECT_NE(result.out.find(row), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("skipped 1 of 6 documents"), std::string::npos) << result.err;

  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "scores.json"));
  const std::size_t candidates = report.at("candidates"), boundaries = report.at("boundaries");
  EXPECT_EQ(boundaries, 10u);  // 5 documents × 2 section breaks
  EXPECT_EQ(report.at("documents"), 6);
  EXPECT_EQ(report.at("skipped_documents"), 1);
  EXPECT_EQ(report.at("context_tokens"), 16);  // from the run's config
  const nlohmann::json& all = report.at("systems").at("all_boundaries");
  EXPECT_EQ(all.at("recall"), 1.0);
  EXPECT_DOUBLE_EQ(all.at("precision").get<double>(), static_cast<double>(boundaries) / candidates);
  for (const char* system : {"model", "random_base_rate"}) {
    const double f1 = report.at("systems").at(system).at("f1");
    EXPECT_GE(f1, 0.0);
    EXPECT_LE(f1, 1.0);
  }

  const std::string lines = slurp(dir_ / "preds.jsonl");
  EXPECT_EQ(static_cast<std::size_t>(std::count(lines.begin(), lines.end(), '\n')), candidates);
  const nlohmann::json first = nlohmann::json::parse(lines.substr(0, lines.find('\n')));
  EXPECT_EQ(first.at("id"), "doc0:0");
  EXPECT_EQ(first.at("label"), 0);
  const double p = first.at("probability");
  EXPECT_EQ(first.at("prediction"), p > 0.5 ? 1 : 0);
}

// --tune-on: the threshold is the one that maximises F1 on that set (tuning on the data scored
// itself, so the tuned row's F1 must equal the tuning F1 and be no worse than the 0.5 argmax's),
// and each line's tuned_prediction applies it.
TEST_F(CliSegment, TuneOnChoosesTheThresholdWithTheBestValidationF1) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult result = run("segment --quiet --model " + path("run") + " --data " + path("valid.jsonl") +
                               " --tune-on " + path("valid.jsonl") + " --json " + path("tuned.json") + " --out " +
                               path("tuned.jsonl"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("model, threshold "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tuned on " + path("valid.jsonl")), std::string::npos) << result.out;
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "tuned.json"));
  const double threshold = report.at("tuned_threshold").at("threshold");
  const double tuned_f1 = report.at("systems").at("model_tuned").at("f1");
  EXPECT_DOUBLE_EQ(tuned_f1, report.at("tuned_threshold").at("validation").at("f1").get<double>());
  EXPECT_GE(tuned_f1, report.at("systems").at("model").at("f1").get<double>());
  // No other cut over the candidates' probabilities beats it.
  std::vector<float> probabilities;
  std::vector<int> labels;
  std::istringstream lines(slurp(dir_ / "tuned.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json row = nlohmann::json::parse(line);
    probabilities.push_back(row.at("probability").get<float>());
    labels.push_back(row.at("label").get<int>());
    EXPECT_EQ(row.at("tuned_prediction"), row.at("probability").get<float>() >= threshold ? 1 : 0) << line;
  }
  for (const float cut : probabilities) {
    std::size_t predicted = 0, correct = 0, gold = 0;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      predicted += probabilities[i] >= cut;
      correct += probabilities[i] >= cut && labels[i] == 1;
      gold += labels[i];
    }
    EXPECT_LE(2.0 * correct / (predicted + gold), tuned_f1 + 1e-12) << cut;
  }
}

TEST_F(CliSegment, LimitScoresTheFirstCandidatesOnly) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult result = run("segment --quiet --limit 4 --model " + path("run") + " --data " +
                               path("valid.jsonl") + " --json " + path("limited.json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "limited.json")).at("candidates"), 4);
}

TEST_F(CliSegment, DataWithoutACandidateIsAnErrorAndWritesNothing) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  std::ofstream(dir_ / "short.jsonl") << R"({"document": "Only one sentence.", "summary": "x"})" << "\n";
  const CliResult result = run("segment --quiet --model " + path("run") + " --data " + path("short.jsonl") +
                               " --json " + path("none.json"));
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("short.jsonl"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("two sentences"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir_ / "none.json"));
}

}  // namespace
}  // namespace strata
