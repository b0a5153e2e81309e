// `strata plot` run as a user would, on a generated metrics.jsonl: the files it writes and
// its errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.h"
#include "support/expect.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;


// Train lines every 100 steps, validation every 500, as a training loop would log them.
const char* kMetrics =
    R"({"step": 100, "split": "train", "loss": 2.9, "lr": 0.0001, "tokens_per_s": 5400}
{"step": 200, "split": "train", "loss": 2.5, "lr": 0.0002, "tokens_per_s": 5500}
{"step": 300, "split": "train", "loss": 2.4, "lr": 0.0003, "tokens_per_s": 5450, "note": "warm"}
{"step": 500, "split": "validation", "loss": 2.1, "rouge1": 0.31, "eval/rougeL": 0.28}
{"step": 400, "split": "train", "loss": 2.2, "lr": 0.0003, "tokens_per_s": 5600}
{"step": 1000, "split": "validation", "loss": 1.9, "rouge1": 0.35, "eval/rougeL": 0.3}
)";

class CliPlot : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_cli_plot_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    run_ = dir_ / "run";
    fs::create_directories(run_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }
  Result run(const std::string& args) { return test_support::run_strata(args, dir_); }

  fs::path dir_, run_;
};

TEST_F(CliPlot, OneSvgPerMetricWithASeriesPerSplit) {
  write(run_ / "metrics.jsonl", kMetrics);
  const Result r = run("plot " + run_.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path plots = run_ / "plots";
  for (const char* name :
       {"loss.svg", "lr.svg", "tokens_per_s.svg", "rouge1.svg", "eval_rougeL.svg"}) {
    EXPECT_TRUE(fs::exists(plots / name)) << name;
    EXPECT_NE(r.out.find((plots / name).string()), std::string::npos) << r.out;
  }
  // The string field "note" is not a metric; nothing else was written.
  EXPECT_EQ(std::distance(fs::directory_iterator(plots), fs::directory_iterator()), 5);

  const std::string loss = slurp(plots / "loss.svg");
  EXPECT_EQ(loss.rfind("<svg", 0), 0u);
  EXPECT_EQ(test_support::count_occurrences(loss, "<polyline"), 2u);  // train (4 points) and validation (2 points)
  EXPECT_NE(loss.find(">train</text>"), std::string::npos);
  EXPECT_NE(loss.find(">validation</text>"), std::string::npos);
  const std::string lr = slurp(plots / "lr.svg");
  EXPECT_EQ(test_support::count_occurrences(lr, "<polyline"), 1u);
  EXPECT_EQ(lr.find(">validation</text>"), std::string::npos);
}

TEST_F(CliPlot, MetricsAndOutOptions) {
  const fs::path metrics = dir_ / "elsewhere.jsonl", out = dir_ / "charts";
  write(metrics, R"({"step": 1, "loss": 3}
{"step": 2, "loss": 2.5}
)");
  const Result r = run("plot " + run_.string() + " --metrics " + metrics.string() + " --out " +
                       out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "loss.svg"));
  EXPECT_FALSE(fs::exists(run_ / "plots"));
  // Lines without a split are one series, labelled "all".
  EXPECT_NE(slurp(out / "loss.svg").find(">all</text>"), std::string::npos);
}

TEST_F(CliPlot, LineWithoutStepNamesFileLineAndField) {
  write(run_ / "metrics.jsonl", R"({"step": 1, "loss": 3}
{"split": "train", "loss": 2.5}
)");
  const Result r = run("plot " + run_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metrics.jsonl:2: field 'step'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(run_ / "plots" / "loss.svg"));
}

TEST_F(CliPlot, NonNumericStepIsAnError) {
  write(run_ / "metrics.jsonl", R"({"step": "ten", "loss": 3})");
  const Result r = run("plot " + run_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metrics.jsonl:1: field 'step': expected a number"), std::string::npos)
      << r.err;
}

TEST_F(CliPlot, NoNumericFieldsIsAClearError) {
  write(run_ / "metrics.jsonl", R"({"step": 1, "split": "train", "note": "started"}
)");
  const Result r = run("plot " + run_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("metrics.jsonl: no numeric metrics"), std::string::npos) << r.err;
}

TEST_F(CliPlot, MissingRunDirectoryIsNamed) {
  const Result r = run("plot " + (dir_ / "no-such-run").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-run"), std::string::npos) << r.err;
}

TEST_F(CliPlot, MissingMetricsFileIsNamed) {
  const Result r = run("plot " + run_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find((run_ / "metrics.jsonl").string()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
