// `strata bench prefix` runs as a user would: a smoke run at tiny sizes that writes every case
// with a positive time, its ratio to Prefix-tune and the pairs its attention really weighs
// (no timing assertions), its help, and its refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliBenchPrefix : public test_support::ScratchTest {
 protected:
  CliBenchPrefix() : ScratchTest("strata_cli_bench_prefix") {}
};

TEST_F(CliBenchPrefix, HelpNamesItsOptions) {
  const Result r = run("bench prefix --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"--json", "--quiet", "--length", "--prefixes", "--blocks", "--layers", "--d-model",
                           "--heads", "--d-ff", "--top-p", "--tau", "--threads", "--rounds", "Prefix-tune",
                           "HierBlock", "TruncSA", "SoftSA", "UniBlock"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
  EXPECT_EQ(r.out.find("--child"), std::string::npos) << r.out;  // internal
}

TEST_F(CliBenchPrefix, TinyRunReportsEveryCaseAndWhatEachSees) {
  const fs::path json = dir_ / "bench.json";
  // 64 tokens in 3 segments (22, 21, 21), 8 prefixes in 3 groups (3, 3, 2), 2 layers: the
  // lower one blocked under HierBlock.
  const Result r = run("bench prefix --length 64 --prefixes 8 --blocks 3 --layers 2 --d-model 32 --heads 4 "
                       "--d-ff 64 --rounds 1 --threads 1 --quiet --json " + json.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("bench prefix: ["), std::string::npos) << r.err;  // --quiet
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["benchmark"], "prefix");
  EXPECT_EQ(j["length"], 64);
  EXPECT_EQ(j["prefixes"], 8);
  EXPECT_EQ(j["blocks"], 3);
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["lower_layers"], 1);
  EXPECT_EQ(j["reference"], "prefix_tune");

  const char* names[] = {"no_prefix", "prefix_tune", "uniblock", "hierblock", "truncsa", "softsa",
                         "hierblock_softsa"};
  ASSERT_EQ(j["cases"].size(), std::size(names));
  for (const char* name : names) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
    ASSERT_TRUE(j["cases"].contains(name)) << name;
    const nlohmann::json& c = j["cases"][name];
    for (const char* field : {"median_ms", "ratio", "cpu_ms", "cpu_ratio", "paired_ms", "paired_ratio",
                              "paired_cpu_ratio", "attention_ms", "attention_ratio", "attention_cpu_ms",
                              "attention_cpu_ratio", "visible_fraction", "peak_rss_mb"})
      EXPECT_GT(c[field].get<double>(), 0) << name << " " << field;
    EXPECT_LE(c["visible_fraction"].get<double>(), 1.0) << name;
    EXPECT_EQ(c["layer_visible"].size(), 2u) << name;
    EXPECT_TRUE(c["label"].is_string()) << name;
  }
  const nlohmann::json& cases = j["cases"];
  EXPECT_DOUBLE_EQ(cases["prefix_tune"]["ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cases["prefix_tune"]["attention_ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cases["prefix_tune"]["cpu_ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(cases["prefix_tune"]["paired_ratio"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["truncsa_paired_ratio"].get<double>(), cases["truncsa"]["paired_ratio"].get<double>());
  // Every kind of layer timed alone; each case carries the kinds its layers use.
  for (const char* kind : {"plain_no_prefix", "plain", "prefix_block", "top_p", "gumbel", "prefix_block+gumbel"}) {
    ASSERT_TRUE(j["kinds"].contains(kind)) << kind;
    for (const char* field : {"attention_layer_ms", "attention_layer_cpu_ms", "vs_plain", "tile_density"})
      EXPECT_GT(j["kinds"][kind][field].get<double>(), 0) << kind << " " << field;
  }
  EXPECT_DOUBLE_EQ(j["kinds"]["plain"]["vs_plain"].get<double>(), 1.0);
  EXPECT_EQ(cases["hierblock"]["kinds"].size(), 2u);
  EXPECT_TRUE(cases["hierblock"]["kinds"].contains("prefix_block"));
  EXPECT_TRUE(cases["no_prefix"]["kinds"].contains("plain_no_prefix"));
  // The attention of a case is its layers' kinds summed.
  EXPECT_NEAR(cases["hierblock"]["attention_ms"].get<double>(),
              j["kinds"]["prefix_block"]["attention_layer_ms"].get<double>() +
                  j["kinds"]["plain"]["attention_layer_ms"].get<double>(),
              1e-9);
  EXPECT_DOUBLE_EQ(j["hierblock_ratio"].get<double>(), cases["hierblock"]["ratio"].get<double>());
  EXPECT_DOUBLE_EQ(j["truncsa_ratio"].get<double>(), cases["truncsa"]["ratio"].get<double>());
  EXPECT_EQ(cases["no_prefix"]["prefix_len"], 0);
  // Each case is a recipe, compiled as training compiles it.
  const std::pair<const char*, const char*> recipes[] = {
      {"no_prefix", "finetune"}, {"prefix_tune", "prefix"}, {"uniblock", "uniblock"}, {"hierblock", "hierblock"},
      {"truncsa", "truncsa"},    {"softsa", "softsa"},      {"hierblock_softsa", "hierblock-softsa"}};
  for (const auto& [name, recipe] : recipes) EXPECT_EQ(cases[name]["recipe"], recipe) << name;
  EXPECT_TRUE(cases["no_prefix"]["prefix_visible_fraction"].is_null());

  auto visible = [&](const char* name) { return cases[name]["visible_fraction"].get<double>(); };
  auto prefix = [&](const char* name) { return cases[name]["prefix_visible_fraction"].get<double>(); };
  // Dense attention sees every pair, with or without Gumbel noise.
  for (const char* name : {"no_prefix", "prefix_tune", "softsa"}) EXPECT_DOUBLE_EQ(visible(name), 1.0) << name;
  EXPECT_DOUBLE_EQ(prefix("prefix_tune"), 1.0);
  EXPECT_DOUBLE_EQ(prefix("softsa"), 1.0);
  // UniBlock: segment k sees group k only, (22 * 3 + 21 * 3 + 21 * 2) / (64 * 8) of the
  // prefix pairs, and every key proper.
  const double blocked_prefix = (22.0 * 3 + 21.0 * 3 + 21.0 * 2) / (64.0 * 8);
  const double blocked = (64.0 * 64 + blocked_prefix * 64 * 8) / (64.0 * 72);
  EXPECT_NEAR(prefix("uniblock"), blocked_prefix, 1e-12);
  EXPECT_NEAR(visible("uniblock"), blocked, 1e-12);
  // HierBlock blocks the lower layer only: half way between UniBlock and Prefix-tune.
  EXPECT_NEAR(prefix("hierblock"), (blocked_prefix + 1.0) / 2, 1e-12);
  EXPECT_NEAR(visible("hierblock"), (blocked + 1.0) / 2, 1e-12);
  EXPECT_NEAR(prefix("hierblock_softsa"), prefix("hierblock"), 1e-12);
  EXPECT_LT(prefix("uniblock"), prefix("hierblock"));
  EXPECT_LT(prefix("hierblock"), prefix("prefix_tune"));
  // TruncSA drops whole key columns, at most 5 % of the attention mass a layer.
  EXPECT_LT(visible("truncsa"), 1.0);
  EXPECT_GT(visible("truncsa"), 0.5);
  EXPECT_EQ(cases["truncsa"]["layer_kinds"], nlohmann::json({"top_p", "top_p"}));
  EXPECT_EQ(cases["hierblock"]["layer_kinds"], nlohmann::json({"prefix_block", "plain"}));
  EXPECT_EQ(cases["hierblock_softsa"]["layer_kinds"], nlohmann::json({"prefix_block+gumbel", "plain"}));

  // The table: a line a case, and the two headline ratios, alone and paired.
  EXPECT_NE(r.out.find("HierBlock / Prefix-tune = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TruncSA / Prefix-tune = "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("paired: "), std::string::npos) << r.out;
}

TEST_F(CliBenchPrefix, RefusesBadOptions) {
  Result r = run("bench prefix --d-model 30 --heads 4");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--d-model"), std::string::npos) << r.err;
  r = run("bench prefix --top-p 1.5");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--top-p"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace strata
