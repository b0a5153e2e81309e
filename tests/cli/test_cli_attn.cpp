// `strata attn show` and `strata bench attention` run as a user would: the pictures and the
// sparsity they report (checked against hand counts on tiny cases), their errors, and a
// smoke run of the benchmark (no timing assertions).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/expect.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

const fs::path kManPage = fs::path(STRATA_FIXTURES_DIR) / "doc" / "frob.1";

class CliAttn : public test_support::ScratchTest {
 protected:
  CliAttn() : ScratchTest("strata_cli_attn") {}
  nlohmann::json sparsity(const fs::path& out) { return nlohmann::json::parse(slurp(out / "sparsity.json")); }
};

// With the default byte tokenizer and --max-tokens 40 the man page gives L = 40 tokens.
// window(1,1) sees i-1, i, i+1: 3L - 2 = 118 of L^2 = 1600 pairs; `all` sees every pair.
TEST_F(CliAttn, ShowDrawsOneSvgPerHeadAndCountsPairs) {
  const fs::path spec = write("spec.json", R"j({"heads": [{"mask": "window(1,1)"}, {"mask": "all"}]})j");
  const fs::path out = dir_ / "show";
  const Result r = run("attn show --spec " + spec.string() + " --doc " + kManPage.string() +
                       " --max-tokens 40 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("window(1,1)"), std::string::npos) << r.out;
  for (const char* name : {"head-0.svg", "head-1.svg"}) {
    ASSERT_TRUE(fs::exists(out / name)) << name;
    EXPECT_EQ(slurp(out / name).rfind("<svg", 0), 0u) << name;
  }
  EXPECT_FALSE(fs::exists(out / "head-2.svg"));

  const nlohmann::json j = sparsity(out);
  EXPECT_EQ(j["tokens"], 40);
  EXPECT_EQ(j["keys"], 40);
  ASSERT_EQ(j["heads"].size(), 2u);
  EXPECT_EQ(j["heads"][0]["mask"], "window(1,1)");
  EXPECT_EQ(j["heads"][0]["visible_pairs"], 118);
  EXPECT_EQ(j["heads"][0]["pairs"], 1600);
  EXPECT_DOUBLE_EQ(j["heads"][0]["sparsity"].get<double>(), 1.0 - 118.0 / 1600.0);
  EXPECT_EQ(j["heads"][1]["visible_pairs"], 1600);
  EXPECT_DOUBLE_EQ(j["heads"][1]["sparsity"].get<double>(), 0.0);
  // One 64 x 64 tile covers everything, and both heads visit it.
  EXPECT_DOUBLE_EQ(j["heads"][0]["tile_density"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["heads"][1]["tile_density"].get<double>(), 1.0);
  // The band is one rect a row (rows 1..38 differ, rows 0 and 39 are clipped): 40 rects
  // besides the background, not one per visible pair.
  EXPECT_EQ(test_support::count_occurrences(slurp(out / "head-0.svg"), "<rect "), 41u);
}

// 4 prefix slots over 2 segments: slots 0-1 belong to segment 0 (queries 0-19), slots 2-3
// to segment 1 (queries 20-39). prefix_block shows each query its own 2 slots and all 40
// keys: 40 * 42 = 1680 of 40 * 44 = 1760 pairs.
TEST_F(CliAttn, ShowPrefixBlockAsPng) {
  const fs::path spec = write("spec.json", R"j({"heads": [{"mask": "prefix_block"}]})j");
  const fs::path out = dir_ / "png";
  const Result r = run("attn show --spec " + spec.string() + " --doc " + kManPage.string() +
                       " --max-tokens 40 --prefix 4 --segments 2 --format png --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out / "head-0.png"));
  EXPECT_EQ(slurp(out / "head-0.png").rfind("\x89PNG\r\n\x1a\n", 0), 0u);
  const nlohmann::json j = sparsity(out);
  EXPECT_EQ(j["prefix"], 4);
  EXPECT_EQ(j["keys"], 44);
  EXPECT_EQ(j["heads"][0]["visible_pairs"], 1680);
  EXPECT_EQ(j["heads"][0]["pairs"], 1760);
}

TEST_F(CliAttn, ShowExampleConfigsRun) {
  for (const char* name : {"sliding-window", "same-section", "hibrids", "patterns", "prefix-block"}) {
    const fs::path spec = fs::path(STRATA_FIXTURES_DIR) / ".." / ".." / "configs" / "attention" / (std::string(name) + ".json");
    const Result r = run("attn show --spec " + spec.string() + " --doc " + kManPage.string() +
                         " --prefix 8 --segments 2 --out " + (dir_ / name).string());
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.err;
  }
  // patterns.json: eight heads, the fixed ones see one key a row (the first row of
  // previous_token and the last of next_token see none).
  const nlohmann::json j = sparsity(dir_ / "patterns");
  ASSERT_EQ(j["heads"].size(), 8u);
  EXPECT_EQ(j["heads"][2]["mask"], "fixed previous_token");
  EXPECT_EQ(j["heads"][2]["visible_pairs"], j["tokens"].get<int>() - 1);
  EXPECT_EQ(j["heads"][3]["visible_pairs"], j["tokens"].get<int>() - 1);
  EXPECT_TRUE(j["heads"][2]["tile_density"].is_null());
}

TEST_F(CliAttn, BadSpecNamesTheFile) {
  const fs::path broken = write("broken.json", R"j({"heads": [{"mask": "window(1,"}]})j");
  Result r = run("attn show --spec " + broken.string() + " --doc " + kManPage.string() + " --out " +
                 (dir_ / "x").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;

  const fs::path unknown = write("unknown.json", R"j({"heads": [{"mask": "all"}], "biass": {}})j");
  r = run("attn show --spec " + unknown.string() + " --doc " + kManPage.string() + " --out " +
          (dir_ / "x").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("biass"), std::string::npos) << r.err;

  const fs::path not_json = write("not-json.json", "heads: all");
  r = run("attn show --spec " + not_json.string() + " --doc " + kManPage.string() + " --out " +
          (dir_ / "x").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("not-json.json"), std::string::npos) << r.err;

  r = run("attn show --spec " + (dir_ / "missing.json").string() + " --doc " + kManPage.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  const fs::path spec = write("spec.json", R"j({"heads": [{"mask": "all"}]})j");
  r = run("attn show --spec " + spec.string() + " --doc " + (dir_ / "missing.1").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("missing.1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(CliAttn, HelpExplainsTheOptions) {
  Result r = run("attn show --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"--spec", "--doc", "--tokenizer", "--max-tokens", "--out", "--format",
                           "--segments", "--prefix", "sparsity"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  r = run("bench attention --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"--quick", "--json", "--length", "--threads", "--rounds", "target"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  EXPECT_EQ(r.out.find("--child"), std::string::npos) << r.out;  // internal
}

TEST_F(CliAttn, BenchQuickPrintsEveryCase) {
  const fs::path json = dir_ / "bench.json";
  const Result r = run("bench attention --quick --length 128 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["length"], 128);
  for (const char* name : {"composite", "fused_dense", "fused_window", "fused_same_section", "fused_hibrids",
                           "sgemm", "fused_dense_blas_tiles"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    EXPECT_GT(j["cases"][name]["median_ms"].get<double>(), 0) << name;
  }
  // The window hides about half of the pairs, 7 equal sections about 6/7 of them.
  EXPECT_NEAR(j["cases"]["fused_window"]["rho"].get<double>(), 0.5, 0.02);
  EXPECT_NEAR(j["cases"]["fused_same_section"]["rho"].get<double>(), 6.0 / 7.0, 0.01);
  // Their ratios to dense (HIBRIDS's to the window without its bias) are the median of rounds
  // run side by side with that baseline in their child.
  for (const auto& [name, baseline] : {std::pair{"fused_window", "paired_dense"},
                                       std::pair{"fused_same_section", "paired_dense"},
                                       std::pair{"fused_hibrids", "paired_window"}}) {
    const auto& paired = j["cases"][name][baseline];
    ASSERT_TRUE(paired.is_object()) << name;
    std::vector<double> per_round = paired["ratio_per_round"].get<std::vector<double>>();
    ASSERT_FALSE(per_round.empty()) << name;
    std::sort(per_round.begin(), per_round.end());
    EXPECT_GE(paired["ratio"].get<double>(), per_round.front()) << name;
    EXPECT_LE(paired["ratio"].get<double>(), per_round.back()) << name;
    EXPECT_EQ(j["cases"][name]["ratio"], paired["ratio"]) << name;
  }
  EXPECT_EQ(j["cases"]["fused_dense"]["rho"], 0.0);
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  // The ceiling: the measured FMA peak, and the fused kernel's share of it.
  EXPECT_GT(j["fma_peak_gflops"].get<double>(), 0.0);
  EXPECT_NE(r.out.find("ceiling: fp32 FMA peak"), std::string::npos) << r.out;
  EXPECT_NE(j["cpu"].get<std::string>().find("family"), std::string::npos) << j["cpu"];
  EXPECT_TRUE(j["peer_sdpa_gflops"].is_null());
  EXPECT_NE(r.out.find("peer: not run"), std::string::npos) << r.out;  // no --peer
  EXPECT_FALSE(j["cases"].contains("torch_sdpa"));
}

// A peer runner is any program that speaks the lockstep protocol (strata/bench/peer_program.h):
// a stand-in here (the real one needs a Debian 13 root) whose dense rounds take 40 ms and window
// rounds 44, so the rows, ratios and JSON of the peer are checked.
TEST_F(CliAttn, BenchPairsThePeerRoundByRoundAndGoesOnWithoutIt) {
  const fs::path runner = write("runner.sh", R"sh(#!/bin/sh
[ "$1" = sdpa.py ] || exit 9
case "$*" in *"--case dense"*) ms=40 ;; *"--case window"*) ms=44 ;; *) exit 8 ;; esac
echo "a line of noise first"
echo '{"torch": "2.6.0+stand-in", "blas": "none", "threads": 1, "sdpa_backend": "flash", "length": 128}'
while read word n; do
  [ "$word" = end ] && break
  echo "{\"round\": $n, \"ms\": $ms, \"cpu_ms\": 1}"
done
echo '{"torch": "2.6.0+stand-in", "blas": "none", "sdpa_backend": "flash", "peak_rss_mb": 12}'
)sh");
  fs::permissions(runner, fs::perms::owner_all);
  const fs::path json = dir_ / "bench.json";
  Result r = run("bench attention --quick --length 128 --threads 1 --rounds 1 --peer " + runner.string() + " --json " +
                 json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  ASSERT_TRUE(j["cases"].contains("torch_sdpa")) << r.out;
  EXPECT_EQ(j["cases"]["torch_sdpa"]["median_ms"], 40.0);
  EXPECT_EQ(j["cases"]["torch_sdpa_window"]["median_ms"], 44.0);
  const double dense = j["cases"]["fused_dense"]["median_ms"].get<double>();
  const double window = j["cases"]["fused_window"]["median_ms"].get<double>();
  EXPECT_NEAR(j["cases"]["torch_sdpa"]["ratio"].get<double>(), 40.0 / dense, 1e-9);
  EXPECT_NEAR(j["cases"]["torch_sdpa_window"]["ratio"].get<double>(), 40.0 / window, 1e-9);
  EXPECT_EQ(j["cases"]["torch_sdpa"]["target"]["bound"], 1.25);
  EXPECT_EQ(j["peer"]["torch"], "2.6.0+stand-in");
  EXPECT_NE(r.out.find("PyTorch 2.6 SDPA"), std::string::npos) << r.out;
  // The peer's rate is dense's flops over its 40 ms; the bound on any lead is the peak over it.
  const double flops = j["cases"]["fused_dense"]["flops_per_step"].get<double>();
  EXPECT_NEAR(j["peer_sdpa_gflops"].get<double>(), flops / 40.0 * 1e-6, 1e-9);
  EXPECT_NE(r.out.find("no kernel of the same flops can pass"), std::string::npos) << r.out;

  // A runner that says the peer's root is missing (exit 3): the benchmark goes on without it.
  const fs::path missing = write("missing.sh", "#!/bin/sh\necho 'no peer root' >&2\nexit 3\n");
  fs::permissions(missing, fs::perms::owner_all);
  r = run("bench attention --quick --length 128 --threads 1 --rounds 1 --peer " + missing.string() + " --json " +
          json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sudo bench/peers/setup"), std::string::npos) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(slurp(json))["cases"].contains("torch_sdpa"));
}

// The million-token bench, shortened: both cases run, the section sizes come from the man
// pages given, and a folder without any is a clear error.
TEST_F(CliAttn, BenchLongRunsEveryCaseOnTheManPagesSections) {
  const fs::path json = dir_ / "long.json";
  Result r = run("bench long --quick --length 2048 --chunk 512 --threads 1 --man-dir " +
                 kManPage.parent_path().string() + " --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["length"], 2048);
  EXPECT_EQ(j["chunk"], 512);
  for (const char* name : {"window_global", "same_section_man"}) {
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    EXPECT_GT(j["cases"][name]["tokens_per_s"].get<double>(), 0) << name;
    EXPECT_GT(j["cases"][name]["peak_over_layer_tensors"].get<double>(), 0) << name;
  }
  for (const char* name : {"window_global_streamed", "same_section_streamed"}) {
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    EXPECT_GT(j["cases"][name]["tokens_per_s"].get<double>(), 0) << name;
    EXPECT_TRUE(j["cases"][name]["under_2gb"].get<bool>()) << name;
    // Beside attention alone on whole tensors of the same structure, in the same run.
    EXPECT_GT(j["cases"][name]["over_whole_tensors"]["peak_memory"].get<double>(), 0) << name;
  }
  for (const char* name : {"same_section_man", "same_section_streamed"}) {
    const nlohmann::json& sections = j["cases"][name];
    EXPECT_GT(sections["sections"].get<int>(), 2);
    EXPECT_GE(sections["pages"].get<int>(), 2);  // the fixtures' pages, reused until 2048 words
    EXPECT_LE(sections["largest_section_tokens"].get<int>(), 2048);
  }

  // --cases picks by letter or name, and an unknown one is refused before anything runs.
  r = run("bench long --quick --length 2048 --cases b,window_global_streamed --threads 1 --man-dir " +
          kManPage.parent_path().string() + " --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json picked = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(picked["cases"].size(), 2u);
  EXPECT_TRUE(picked["cases"].contains("same_section_man"));
  EXPECT_TRUE(picked["cases"].contains("window_global_streamed"));
  r = run("bench long --quick --length 2048 --cases e");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown case 'e'"), std::string::npos) << r.err;

  fs::create_directories(dir_ / "empty");
  r = run("bench long --quick --length 2048 --threads 1 --man-dir " + (dir_ / "empty").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("no man page with sections"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
