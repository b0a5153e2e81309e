// `strata analyze heads` and `strata analyze patterns` (seed 003 §3.1) on a tiny summariser
// whose encoder layers carry two injected heads (previous_token fixed, intra_sentence masked),
// so that the relevance of those patterns on those heads is known: the files, JSON shapes,
// printed tables and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/toy_words.h"
#include "support/expect.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::CliResult;
using test_support::slurp;

class CliAnalyzeHeads : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_analyze_heads_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    test_support::ToyWords toy(7);
    auto sentence = [&] { return toy.words(6) + "."; };
    for (const char* split : {"train", "valid"}) {
      std::ofstream out(dir_ / (std::string(split) + ".jsonl"));
      for (int i = 0; i < (split[0] == 't' ? 16 : 4); ++i) {
        const std::string summary = toy.words(4);
        const json body = {{"heading", "description"}, {"paragraphs", {sentence() + " " + sentence()}}};
        out << json{{"id", std::string(split) + std::to_string(i)}, {"title", "tool"},
                    {"paragraphs", {sentence()}}, {"sections", {body}}, {"summary", summary}}
                   .dump()
            << "\n";
      }
    }
    ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("tok") +
                  " --vocab-size 300 --type byte-bpe")
                  .exit_code,
              0);
    std::ofstream(dir_ / "model.toml")
        << "[model]\nd_model = 32\nheads = 2\nd_ff = 64\nencoder_layers = 2\ndecoder_layers = 2\n"
           "max_positions = 128\ninject_patterns = \"previous_token,intra_sentence\"\ninject_heads = 2\n"
        << "[data]\ntrain = \"" << path("train.jsonl") << "\"\nvalid = \"" << path("valid.jsonl")
        << "\"\ntokenizer = \"" << path("tok")
        << "\"\nmax_source_tokens = 64\n"
           "[train]\nmax_steps = 4\nwarmup_steps = 1\nlearning_rate = 0.01\neval_every = 4\neval_docs = 2\n"
           "max_tokens = 512\nthreads = 1\n"
           "[decode]\nbeam_size = 1\nmax_length = 4\n";
    const CliResult trained = run("train --quiet --config " + path("model.toml") + " --out " + path("model"));
    ASSERT_EQ(trained.exit_code, 0) << trained.err;
    // The same system with another seed, for `analyze agreement`.
    const CliResult other = run("train --quiet --config " + path("model.toml") + " --out " + path("model2") +
                                " train.seed=2");
    ASSERT_EQ(other.exit_code, 0) << other.err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
};
fs::path CliAnalyzeHeads::dir_;

const std::vector<std::string> kLayers = {"encoder.layers.0.self_attn",   "encoder.layers.1.self_attn",
                                          "decoder.layers.0.self_attn",   "decoder.layers.0.encoder_attn",
                                          "decoder.layers.1.self_attn",   "decoder.layers.1.encoder_attn"};

TEST_F(CliAnalyzeHeads, HeadsWritesTheTableTheHeatmapAndTheJson) {
  const CliResult r = run("analyze heads --quiet --model " + path("model") + " --data " + path("valid.jsonl") +
                          " --out " + path("heads"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_ / "heads";
  for (const char* file : {"importance.json", "importance.svg", "importance.png"})
    EXPECT_TRUE(fs::exists(out / file)) << file;

  const json report = json::parse(slurp(out / "importance.json"));
  EXPECT_EQ(report["method"], "taylor");
  EXPECT_EQ(report["normalize"], "layer");
  EXPECT_EQ(report["examples"], 4);
  EXPECT_GT(report["labels"].get<int>(), 4);
  EXPECT_EQ(report["layers"], json(kLayers));
  EXPECT_EQ(report["heads"], json({2, 2, 2, 2, 2, 2}));
  ASSERT_EQ(report["scores"].size(), 6u);
  ASSERT_EQ(report["top_head_per_layer"].size(), 6u);
  for (std::size_t l = 0; l < 6; ++l) {
    const double a = report["scores"][l][0], b = report["scores"][l][1];
    EXPECT_NEAR(std::sqrt(a * a + b * b), 1.0, 1e-9) << kLayers[l];  // L2-normalised per layer
    EXPECT_EQ(report["top_head_per_layer"][l], a >= b ? 0 : 1);
  }

  EXPECT_NE(r.out.find("head importance (first-order Taylor, L2-normalised per layer) over 4 validation examples"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("head 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("decoder.layers.1.encoder_attn"), std::string::npos) << r.out;
  EXPECT_EQ(test_support::count_occurrences(r.out, "*"), 7u) << r.out;  // one per layer and the footnote

  const std::string svg = slurp(out / "importance.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("Head importance (first-order Taylor, L2-normalised per layer), 4 validation examples"),
            std::string::npos);
  EXPECT_EQ(test_support::count_occurrences(svg, "<g><title>"), 12u);  // 6 layers × 2 heads
  EXPECT_NE(svg.find(">encoder.layers.0.self_attn</text>"), std::string::npos);
  EXPECT_EQ(slurp(out / "importance.png").substr(0, 4), "\x89PNG");
}

TEST_F(CliAnalyzeHeads, HeadMaskWithoutNormalisationOnFewerExamples) {
  const CliResult r = run("analyze heads --quiet --model " + path("model") + " --data " + path("valid.jsonl") +
                          " --method head_mask --normalize none --max-examples 2 --max-tokens 64 --out " +
                          path("mask"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(slurp(dir_ / "mask" / "importance.json"));
  EXPECT_EQ(report["method"], "head_mask");
  EXPECT_EQ(report["normalize"], "none");
  EXPECT_EQ(report["examples"], 2);
  double total = 0;
  for (const auto& row : report["scores"])
    for (const auto& v : row) {
      EXPECT_GE(v.get<double>(), 0.0);
      total += v.get<double>();
    }
  EXPECT_GT(total, 0.0);
}

TEST_F(CliAnalyzeHeads, HeadsRejectsBadInput) {
  const CliResult method = run("analyze heads --model " + path("model") + " --data " + path("valid.jsonl") +
                               " --method fisher");
  EXPECT_NE(method.exit_code, 0);
  const CliResult no_data = run("analyze heads --model " + path("model"));
  EXPECT_NE(no_data.exit_code, 0);
  const CliResult missing = run("analyze heads --model " + path("nowhere") + " --data " + path("valid.jsonl"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nowhere"), std::string::npos) << missing.err;
}

TEST_F(CliAnalyzeHeads, PatternsFindTheInjectedHeads) {
  const CliResult r = run("analyze patterns --quiet --model " + path("model") + " --data " + path("valid.jsonl") +
                          " --patterns intra_sentence,previous_token,next_token,local --definitions "
                          "'{\"local\": \"previous_token | next_token\"}' --top 3 --out " + path("patterns"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_ / "patterns";
  const json report = json::parse(slurp(out / "relevance.json"));
  EXPECT_EQ(report["examples"], 4);
  EXPECT_EQ(report["layers"], json({"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"}));
  EXPECT_EQ(report["definitions"], json({{"local", "previous_token | next_token"}}));
  ASSERT_EQ(report["patterns"].size(), 4u);
  const json& sentence = report["patterns"][0];
  const json& previous = report["patterns"][1];
  const json& next = report["patterns"][2];
  const json& local = report["patterns"][3];
  EXPECT_EQ(sentence["name"], "intra_sentence");
  for (std::size_t l = 0; l < 2; ++l) {
    ASSERT_EQ(sentence["matrix"][l].size(), 2u);
    // Head 1 is masked to its sentence: all of its weight stays there.
    EXPECT_NEAR(sentence["matrix"][l][1].get<double>(), 1.0, 1e-5);
    // Head 0 is fixed on the previous token: every query but the first, (|x| - 1) / |x|.
    EXPECT_GT(previous["matrix"][l][0].get<double>(), 0.9);
    EXPECT_LT(previous["matrix"][l][0].get<double>(), 1.0);
    EXPECT_NEAR(next["matrix"][l][0].get<double>(), 0.0, 1e-7);
    // Disjoint predicates: the relevance of their union is the sum.
    for (std::size_t h = 0; h < 2; ++h)
      EXPECT_NEAR(local["matrix"][l][h].get<double>(),
                  previous["matrix"][l][h].get<double>() + next["matrix"][l][h].get<double>(), 1e-6);
  }
  for (const json& p : report["patterns"]) {
    EXPECT_EQ(p["top"].size(), 3u);
    EXPECT_FALSE(p["kept"].get<bool>());  // 4 heads: no head can lie 3 deviations above their mean
    EXPECT_NEAR(p["threshold"].get<double>(), p["mean"].get<double>() + 3 * p["std"].get<double>(), 1e-12);
    const std::string name = p["name"];
    EXPECT_EQ(p["files"], json({name + ".svg", name + ".png"}));
    EXPECT_TRUE(fs::exists(out / (name + ".svg"))) << name;
    EXPECT_EQ(slurp(out / (name + ".png")).substr(0, 4), "\x89PNG") << name;
  }
  EXPECT_EQ(previous["top"][0]["head"], 0);
  EXPECT_NE(slurp(out / "intra_sentence.svg").find("Global relevance of intra_sentence"), std::string::npos);
  EXPECT_NE(r.out.find("3-sigma"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top heads of intra_sentence: encoder.layers."), std::string::npos) << r.out;
}

// Two seeds of the same system: the fixed previous-token head (head 1 of every encoder layer)
// attends identically in both, the learned intra-sentence head does not; a model against
// itself agrees exactly.
TEST_F(CliAnalyzeHeads, AgreementIsZeroForFixedHeadsAndForAModelAgainstItself) {
  const CliResult r = run("analyze agreement --quiet --model " + path("model") + " --model " + path("model2") +
                          " --model " + path("model") + " --data " + path("valid.jsonl") + " --out " +
                          path("agreement"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("mean over 3 pairs:"), std::string::npos) << r.out;
  const json report = json::parse(slurp(dir_ / "agreement" / "agreement.json"));
  EXPECT_EQ(report["layers"], json({"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"}));
  EXPECT_EQ(report["examples"], 4);
  ASSERT_EQ(report["pairs"].size(), 3u);
  for (const json& pair : report["pairs"]) {
    const bool same = pair["a"] == pair["b"];
    for (const json& row : pair["matrix"]) {
      ASSERT_EQ(row.size(), 2u);
      EXPECT_LT(row[0].get<double>(), 1e-6) << pair;  // previous_token: fixed, the same in every model
      if (same) EXPECT_LT(row[1].get<double>(), 1e-9) << pair;
      else EXPECT_GT(row[1].get<double>(), 1e-6) << pair;
      EXPECT_LE(row[1].get<double>(), std::log(2.0));
    }
  }
  const CliResult one = run("analyze agreement --model " + path("model") + " --data " + path("valid.jsonl"));
  EXPECT_NE(one.exit_code, 0);
  EXPECT_NE(one.err.find("two or more models, 1 given"), std::string::npos) << one.err;
}

TEST_F(CliAnalyzeHeads, PatternsRejectUnknownNamesAndBadDefinitions) {
  const std::string base = "analyze patterns --model " + path("model") + " --data " + path("valid.jsonl");
  const CliResult unknown = run(base + " --patterns sentence");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("unknown pattern 'sentence'"), std::string::npos) << unknown.err;
  const CliResult bad = run(base + " --definitions '{\"x\": '");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--definitions: not JSON"), std::string::npos) << bad.err;
  const CliResult missing_file = run(base + " --definitions " + path("none.json"));
  EXPECT_NE(missing_file.exit_code, 0);
  EXPECT_NE(missing_file.err.find("none.json"), std::string::npos) << missing_file.err;
}

}  // namespace
}  // namespace strata
