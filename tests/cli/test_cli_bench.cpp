// `strata bench hibrids` runs as a user would: a smoke run on a short document that writes
// every case and its ratio to the base (no timing assertions), and its help.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliBench : public test_support::ScratchTest {
 protected:
  CliBench() : ScratchTest("strata_cli_bench") {}
};

TEST_F(CliBench, HibridsHelpNamesItsOptions) {
  const Result r = run("bench hibrids --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"--quick", "--json", "--length", "--window", "--threads", "--rounds", "target"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  EXPECT_EQ(r.out.find("--child"), std::string::npos) << r.out;  // internal
}

TEST_F(CliBench, HibridsQuickReportsEveryCaseWithItsRatio) {
  const fs::path json = dir_ / "bench.json";
  const Result r = run("bench hibrids --quick --length 256 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "hibrids");
  EXPECT_EQ(j["length"], 256);
  EXPECT_EQ(j["window"], 256);
  ASSERT_EQ(j["cases"].size(), 3u);
  for (const char* name : {"base", "hibrids", "hibrids_selected"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    const nlohmann::json& c = j["cases"][name];
    EXPECT_GT(c["median_ms"].get<double>(), 0) << name;
    EXPECT_GT(c["ratio"].get<double>(), 0) << name;
    EXPECT_TRUE(c["ratio_of"].is_string()) << name;
    EXPECT_GT(c["peak_rss_mb"].get<double>(), 0) << name;
  }
  EXPECT_DOUBLE_EQ(j["cases"]["base"]["ratio"].get<double>(), 1.0);
  // The cases are seed 001's recipes with their band at --window.
  EXPECT_EQ(j["cases"]["base"]["recipe"], "longformer");
  EXPECT_EQ(j["cases"]["hibrids"]["recipe"], "hibrids-enc");
  EXPECT_EQ(j["cases"]["hibrids_selected"]["recipe"], "hibrids-s-enc");
  EXPECT_EQ(j["mask"], "window(256,256) | global(1)");
  EXPECT_FALSE(j["cases"]["base"].contains("target"));
  for (const char* name : {"hibrids", "hibrids_selected"}) {
    EXPECT_EQ(j["cases"][name]["target"]["op"], "<=") << name;
    EXPECT_DOUBLE_EQ(j["cases"][name]["target"]["bound"].get<double>(), 1.3) << name;
    EXPECT_TRUE(j["cases"][name]["target"]["met"].is_boolean()) << name;
  }
  // Tables of seed 001: (2 * 4 + 1) PathLen x (2 * 2 + 1) LvlDiff values, 11 salient relations.
  EXPECT_EQ(j["cases"]["base"]["relation_count"], 0);
  EXPECT_EQ(j["cases"]["hibrids"]["relation_count"], 45);
  EXPECT_EQ(j["cases"]["hibrids_selected"]["relation_count"], 11);
  // The layout the kernel reads: 60 sections and the root, S x S relations, an L x L index
  // would be 256 * 256 * 8 bytes.
  const nlohmann::json& memory = j["layout_memory"];
  EXPECT_EQ(memory["sections_with_root"], 61);
  EXPECT_EQ(memory["relation_id_bytes"], 61 * 61 * 4);
  EXPECT_EQ(memory["dense_index_bytes"], 256 * 256 * 8);
  EXPECT_GT(memory["total_bytes"].get<double>(), 0);
}

TEST_F(CliBench, HibridsRejectsAnUnknownCase) {
  const Result r = run("bench hibrids --child nonsense --child-out " + (dir_ / "x.json").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nonsense"), std::string::npos) << r.err;
}

TEST_F(CliBench, LinearTimesEveryLayerBothWaysAndNamesTheKernels) {
  const fs::path json = dir_ / "linear.json";
  const Result r = run("bench linear --quick --rows 64 --threads 1 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* word : {"BLAS:", "CPU:", "fp32 FMA peak", "strata's product:", "libtorch/strata", "strata/peak",
                           "lm_head 256->8000"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "linear");
  EXPECT_EQ(j["rows"], 64);
  const double peak = j["fma_peak_gflops"].get<double>();
  EXPECT_GT(peak, 0.0);
  EXPECT_NE(j["cpu"].get<std::string>().find("family"), std::string::npos) << j["cpu"];
  ASSERT_EQ(j["cases"].size(), 4u);
  for (const auto& [layer, c] : j["cases"].items()) {
    EXPECT_GT(c["strata_ms"].get<double>(), 0.0) << layer;
    EXPECT_GT(c["libtorch_ms"].get<double>(), 0.0) << layer;
    EXPECT_GT(c["libtorch_over_strata"].get<double>(), 0.0) << layer;
    // The fraction of the ceiling is the layer's GFLOP/s over the measured peak.
    EXPECT_NEAR(c["strata_of_peak"].get<double>(),
                c["gflop"].get<double>() / c["strata_ms"].get<double>() * 1e3 / peak, 1e-9) << layer;
  }
}

TEST_F(CliBench, BstTimesEveryLayerAtEveryLengthWithItsFlops) {
  const fs::path json = dir_ / "bst.json";
  const Result r = run("bench bst --quick --rounds 1 --lengths 64,128 --window 16 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "bst");
  EXPECT_EQ(j["window"], 16);
  ASSERT_EQ(j["cases"].size(), 10u);
  for (const char* length : {"64", "128"})
    for (const char* layer : {"slide", "bst_sh", "bst_mh", "bst_mf", "brect"}) {
      const std::string name = std::string(layer) + "@" + length;
      ASSERT_TRUE(j["cases"].contains(name)) << name;
      const nlohmann::json& c = j["cases"][name];
      EXPECT_GT(c["median_ms"].get<double>(), 0) << name;
      EXPECT_EQ(c["layer"], layer);
      EXPECT_EQ(c["ratio_of"], std::string(layer) + "/slide");
      // A BST layer does what SLIDE does and more.
      if (std::string(layer) != "slide") EXPECT_GT(c["flops_ratio"].get<double>(), 1.0) << name;
    }
  EXPECT_DOUBLE_EQ(j["cases"]["slide@64"]["ratio"].get<double>(), 1.0);
  // SLIDE's flops grow linearly in the length: twice the tokens, twice the work.
  EXPECT_NEAR(j["cases"]["slide@128"]["flops"].get<double>() / j["cases"]["slide@64"]["flops"].get<double>(), 2.0,
              0.1);
  const Result bad = run("bench bst --kernel s5");
  EXPECT_NE(bad.exit_code, 0);
}

TEST_F(CliBench, BstLongTrainsBothStacksAndReportsTheirPeakMemory) {
  const fs::path json = dir_ / "bst-long.json";
  const Result r = run("bench bst-long --quick --rounds 1 --length 512 --d-model 32 --window 16 --span 64 --json " +
                       json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "bst-long");
  EXPECT_EQ(j["length"], 512);
  for (const char* stack : {"slide", "bst"}) {
    ASSERT_TRUE(j["cases"].contains(stack)) << stack;
    const nlohmann::json& c = j["cases"][stack];
    EXPECT_GT(c["median_ms"].get<double>(), 0) << stack;
    EXPECT_GT(c["peak_rss_mb"].get<double>(), 0) << stack;
    EXPECT_EQ(c["ratio_of"], std::string(stack) + "/slide");
  }
  const Result bad = run("bench bst-long --window 16 --span 40");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("multiple of --window"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace strata
