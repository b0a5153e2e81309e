// Question-summary hierarchies end to end as a user runs them (seed 001 Task I): train a tiny
// seq2seq model with data.task = qs_hierarchy (plain, HIERENC and MULTITASK), decode the test
// file with `strata eval summarize`, read the outputs back as trees and score them with
// `strata eval hierarchy`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/doc/document.h"
#include "strata/eval/qs_hierarchy.h"
#include "support/cli.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

std::vector<nlohmann::json> read_lines(const fs::path& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

// Six pages with two sections each; the hierarchy follows the tree.
void write_qs(const fs::path& path) {
  std::ofstream out(path);
  for (int i = 0; i < 6; ++i) {
    const std::string n = std::to_string(i);
    QsExample e;
    e.id = "page" + n;
    e.document = build_document("page" + n, {{1, "DESCRIPTION"}, {0, "DESCRIPTION"}, {0, "tool " + n + " lists files."},
                                             {1, "OPTIONS"}, {0, "OPTIONS"}, {0, "the flag " + n + " shows all."}});
    e.hierarchy.roots = {{"What is page" + n + "?", "a lister",
                          {{"What does page" + n + " do?", "tool " + n + " lists files.", {}},
                           {"Which options does page" + n + " take?", "the flag " + n + " shows all.", {}}}}};
    out << qs_example_json(e).dump() << "\n";
  }
}

class CliQs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_qs_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(test_support::write_tiny_run(dir_, {.data = "max_source_tokens = 64\nmax_target_tokens = 48\n"
                                                          "task = \"qs_hierarchy\"\n",
                                                  .train = "max_steps = 4\nwarmup_steps = 1\neval_every = 4\n"
                                                           "eval_docs = 0\n",
                                                  .decode = "max_length = 24\n"})
                  .exit_code,
              0);
    write_qs(dir_ / "qs.jsonl");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static CliResult train(const std::string& out, const std::string& more = "") {
    return run("train --quiet --config " + path("tiny.toml") + " --out " + path(out) + " data.train=" +
               path("qs.jsonl") + " data.valid=" + path("qs.jsonl") + " " + more);
  }

  static fs::path dir_;
};
fs::path CliQs::dir_;

TEST_F(CliQs, TrainsDecodesParsesAndScoresTaskOne) {
  const CliResult trained = train("run");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_NE(trained.out.find("data: 6 training and 6 validation QS samples"), std::string::npos) << trained.out;
  const CliResult eval = run("eval summarize --model " + path("run") + " --data " + path("qs.jsonl") + " --out " +
                             path("eval") + " --show 0");
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.out.find("strata eval hierarchy --pairs"), std::string::npos) << eval.out;
  const std::vector<nlohmann::json> predictions = read_lines(dir_ / "eval/predictions.jsonl");
  ASSERT_EQ(predictions.size(), 6u);
  EXPECT_EQ(predictions[0]["id"], "page0#1");
  EXPECT_EQ(predictions[0]["reference"], "a lister [L↑] What does page0 do? tool 0 lists files. [L-] Which options "
                                         "does page0 take? the flag 0 shows all.");
  // Every output read back as a tree by the robust parser, as written in hierarchies.jsonl.
  const std::vector<nlohmann::json> trees = read_lines(dir_ / "eval/hierarchies.jsonl");
  ASSERT_EQ(trees.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(trees[i]["id"], predictions[i]["id"]);
    const QsHierarchy parsed = parse_hierarchy(predictions[i]["prediction"].get<std::string>());
    EXPECT_EQ(trees[i]["hierarchy"].dump(), hierarchy_json(parsed).dump());
  }
  const CliResult scored = run("eval hierarchy --json --pairs " + path("eval/predictions.jsonl") +
                               " --per-example " + path("per.jsonl"));
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  const nlohmann::json summary = nlohmann::json::parse(scored.out);
  EXPECT_EQ(summary["count"], 6);
  EXPECT_DOUBLE_EQ(summary["reference"]["edges_per_hierarchy"].get<double>(), 2.0);
  EXPECT_TRUE(summary.contains("question_bleu_nltk"));
  const std::vector<nlohmann::json> per = read_lines(dir_ / "per.jsonl");
  ASSERT_EQ(per.size(), 6u);
  EXPECT_EQ(per[3]["id"], "page3#1");
}

TEST_F(CliQs, HierencAndMultitaskTrainOnTheSameData) {
  for (const char* recipe : {"hierenc", "multitask"}) {
    const CliResult trained = train(recipe, std::string("--recipe ") + recipe);
    ASSERT_EQ(trained.exit_code, 0) << recipe << ": " << trained.err;
    const CliResult eval = run("eval summarize --model " + path(recipe) + " --data " + path("qs.jsonl") + " --out " +
                               path(std::string(recipe) + "-eval") + " --show 0");
    ASSERT_EQ(eval.exit_code, 0) << recipe << ": " << eval.err;
    EXPECT_EQ(read_lines(dir_ / (std::string(recipe) + "-eval/predictions.jsonl")).size(), 6u);
  }
}

TEST_F(CliQs, ChildQuestionsAndABadTaskName) {
  const CliResult trained = train("childq", "data.qs_task=child_questions");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const CliResult bad = train("bad", "data.qs_task=childq");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("data.qs_task: expected 'hierarchy'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace strata
