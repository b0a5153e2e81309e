// `strata bench patterns` runs as a user would: a smoke run at tiny sizes that writes every
// case with its sparsity and ratio to vanilla, and the per-pattern breakdown (no timing
// assertions), its help, and its refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliBenchPatterns : public test_support::ScratchTest {
 protected:
  CliBenchPatterns() : ScratchTest("strata_cli_bench_patterns") {}
};

TEST_F(CliBenchPatterns, HelpNamesItsOptions) {
  const Result r = run("bench patterns --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"--quick", "--json", "--length", "--layers", "--heads", "--d-model", "--patterned",
                           "--threads", "--rounds", "target"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  EXPECT_EQ(r.out.find("--child"), std::string::npos) << r.out;  // internal
}

TEST_F(CliBenchPatterns, QuickReportsEveryCaseItsSparsityAndWhereTheTimeGoes) {
  const fs::path json = dir_ / "bench.json";
  const Result r = run("bench patterns --quick --threads 1 --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "patterns");
  EXPECT_EQ(j["length"], 256);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["heads"], 8);
  EXPECT_EQ(j["patterned"], 8);
  EXPECT_EQ(j["d_ff"], 4 * j["d_model"].get<int>());
  EXPECT_EQ(j["document"]["tokens"], 256);
  // A text-like page: sentences of 8 to 40 tokens, words that repeat and words seen once.
  EXPECT_GE(j["document"]["shortest_sentence_tokens"].get<int>(), 8);
  EXPECT_LE(j["document"]["longest_sentence_tokens"].get<int>(), 40);
  const double once = j["document"]["once_seen_fraction"].get<double>();
  EXPECT_GT(once, 0.0);
  EXPECT_LT(once, 1.0);

  ASSERT_EQ(j["cases"].size(), 3u);
  for (const char* name : {"vanilla", "patterns_4", "patterns_n"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    const nlohmann::json& c = j["cases"][name];
    for (const char* field : {"median_ms", "ratio", "speedup", "attention_layer_ms", "peak_rss_mb"})
      EXPECT_GT(c[field].get<double>(), 0) << name << " " << field;
    EXPECT_TRUE(c["label"].is_string()) << name;
    EXPECT_TRUE(c["block_mask"]["groups"].is_array()) << name;
  }
  EXPECT_EQ(j["cases"]["vanilla"]["recipe"], "extractive");
  EXPECT_EQ(j["cases"]["patterns_4"]["recipe"], "extractive-patterns");
  EXPECT_EQ(j["cases"]["patterns_n"]["recipe"], "extractive-patterns-all");
  EXPECT_EQ(j["patterns"], "matching_token,intra_sentence,previous_token,next_token");
  EXPECT_EQ(j["cases"]["vanilla"]["patterned_heads"], 0);
  EXPECT_EQ(j["cases"]["patterns_4"]["patterned_heads"], 4);
  EXPECT_EQ(j["cases"]["patterns_n"]["patterned_heads"], 8);
  EXPECT_DOUBLE_EQ(j["cases"]["vanilla"]["ratio"].get<double>(), 1.0);

  // More patterned heads hide more pairs; plain attention hides none.
  const double vanilla = j["cases"]["vanilla"]["rho"].get<double>();
  const double four = j["cases"]["patterns_4"]["rho"].get<double>();
  const double all = j["cases"]["patterns_n"]["rho"].get<double>();
  EXPECT_EQ(vanilla, 0.0);
  EXPECT_GT(four, vanilla);
  EXPECT_GT(all, four);
  EXPECT_LT(all, 1.0);

  // 8 of 8: each pattern in two heads; the fixed heads (previous, next token) need no tiles.
  EXPECT_EQ(j["cases"]["patterns_n"]["block_mask"]["fixed_heads"], nlohmann::json({2, 3, 6, 7}));
  EXPECT_EQ(j["cases"]["vanilla"]["block_mask"]["groups"][0]["tile_density"], 1.0);

  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(),
                   j["cases"]["vanilla"]["median_ms"].get<double>() / j["cases"]["patterns_n"]["median_ms"].get<double>());
  EXPECT_EQ(j["target"]["op"], ">=");
  EXPECT_DOUBLE_EQ(j["target"]["bound"].get<double>(), 2.0);
  EXPECT_TRUE(j["target"]["met"].is_boolean());

  for (const char* kind : {"plain", "matching_token", "intra_sentence", "previous_token", "next_token"}) {
    ASSERT_TRUE(j["head_kinds"].contains(kind)) << kind;
    EXPECT_GT(j["head_kinds"][kind]["median_ms"].get<double>(), 0) << kind;
  }
  EXPECT_EQ(j["head_kinds"]["plain"]["rho"], 0.0);
  EXPECT_GT(j["head_kinds"]["intra_sentence"]["rho"].get<double>(), 0.5);
  // The kernel runs matching_token heads in token order, so their block mask is compiled on
  // that layout: equal tokens sit together and some tiles are skipped, which in document order
  // none would be. The other heads keep the document order.
  const nlohmann::json& matching = j["head_kinds"]["matching_token"]["block_mask"];
  EXPECT_EQ(matching["token_ordered_heads"].size(), 8u);
  EXPECT_EQ(matching["groups"][0]["order"], "token");
  EXPECT_LT(matching["groups"][0]["tile_density"].get<double>(), 1.0);
  const nlohmann::json& all_mask = j["cases"]["patterns_n"]["block_mask"];
  EXPECT_EQ(all_mask["token_ordered_heads"], nlohmann::json({0, 4}));
  for (const nlohmann::json& g : all_mask["groups"])
    EXPECT_EQ(g["order"], g["heads"] == nlohmann::json({0, 4}) ? "token" : "document") << g;
  EXPECT_EQ(j["cases"]["vanilla"]["block_mask"]["groups"][0]["order"], "document");
}

TEST_F(CliBenchPatterns, RefusesTooFewPatternedHeads) {
  const Result r = run("bench patterns --quick --patterned 2");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--patterned 2"), std::string::npos) << r.err;
}

TEST_F(CliBenchPatterns, RejectsAnUnknownCase) {
  const Result r = run("bench patterns --child nonsense --child-out " + (dir_ / "x.json").string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nonsense"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
