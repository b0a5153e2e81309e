// `strata analyze attention` and `strata analyze spectrum` (seed 000 Figure 1, A.7 Figure 7) on
// tiny summarisers trained for a few steps: one without prefixes, one prefix-tuned (P = 4) and a
// prefix file tuned on the first: the files, their shapes (P prefix columns first, rows summing
// to 1 over P + L), the JSON, the printed tables and the errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/safetensors.h"
#include "support/cli.h"
#include "support/toy_words.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::CliResult;
using test_support::slurp;

class CliAnalyzeAttention : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_analyze_attention_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    test_support::ToyWords toy(11);
    auto sentence = [&] { return toy.words(6) + "."; };
    for (const char* split : {"train", "valid"}) {
      std::ofstream out(dir_ / (std::string(split) + ".jsonl"));
      for (int i = 0; i < (split[0] == 't' ? 16 : 4); ++i) {
        const json body = {{"heading", "description"}, {"paragraphs", {sentence() + " " + sentence()}}};
        out << json{{"id", std::string(split) + std::to_string(i)}, {"title", "tool"},
                    {"paragraphs", {sentence()}}, {"sections", {body}}, {"summary", toy.words(4)}}
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
           "max_positions = 128\n"
        << "[data]\ntrain = \"" << path("train.jsonl") << "\"\nvalid = \"" << path("valid.jsonl")
        << "\"\ntokenizer = \"" << path("tok")
        << "\"\nmax_source_tokens = 64\n"
           "[train]\nmax_steps = 4\nwarmup_steps = 1\nlearning_rate = 0.01\neval_every = 4\neval_docs = 2\n"
           "max_tokens = 512\nthreads = 1\n"
           "[decode]\nbeam_size = 1\nmax_length = 4\n";
    const std::string train = "train --quiet --config " + path("model.toml");
    const std::string prefixes = " model.prefix_length=4 model.prefix_hidden=16";
    for (const std::string& args :
         {train + " --out " + path("plain"), train + " --out " + path("prefixed") + prefixes,
          // Only the prefix trains, so its file loads back onto `plain`.
          train + " --base " + path("plain") + " --out " + path("tuned") + prefixes + " 'train.train_only=[\"prefix.*\"]'",
          "lm train --quiet --config " + path("model.toml") + " --out " + path("lm") +
              " model.architecture=causal_lm model.pre_norm=true data.block_size=16 train.eval_docs=0"}) {
      const CliResult trained = run(args);
      ASSERT_EQ(trained.exit_code, 0) << args << "\n" << trained.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
};
fs::path CliAnalyzeAttention::dir_;

// Checks attention.json and attention.safetensors of `out`: `examples` maps per layer of
// [tokens, P + tokens] whose rows sum to 1 over the P prefix keys and the inputs together.
void expect_maps(const fs::path& out, std::size_t examples, std::int64_t prefixes) {
  for (const char* file : {"attention.json", "attention.safetensors", "layer0.svg", "layer0.png", "layer1.svg",
                           "layer1.png"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  const json report = json::parse(slurp(out / "attention.json"));
  ASSERT_EQ(report["examples"].size(), examples);
  ASSERT_EQ(report["layers"].size(), 2u);
  const SafetensorsFile matrices(out / "attention.safetensors");
  EXPECT_EQ(matrices.entries().size(), 2 * examples);
  for (std::size_t l = 0; l < 2; ++l) {
    const json& layer = report["layers"][l];
    EXPECT_EQ(layer["layer"], l);
    EXPECT_EQ(layer["prefix_length"], prefixes);
    EXPECT_EQ(layer["files"], json({"layer" + std::to_string(l) + ".svg", "layer" + std::to_string(l) + ".png"}));
    if (prefixes > 0) {
      EXPECT_GT(layer["prefix_mass"].get<double>(), 0.0);
      EXPECT_LT(layer["prefix_mass"].get<double>(), 1.0);
    } else {
      EXPECT_EQ(layer["prefix_mass"].get<double>(), 0.0);
    }
    EXPECT_GT(layer["entropy"].get<double>(), 0.0);
    for (std::size_t e = 0; e < examples; ++e) {
      const std::int64_t tokens = report["examples"][e]["tokens"];
      const TensorEntry& entry = matrices.entry("layer" + std::to_string(l) + ".example" + std::to_string(e));
      EXPECT_EQ(entry.dtype, "F32");
      ASSERT_EQ(entry.shape, (std::vector<std::int64_t>{tokens, prefixes + tokens}));
      std::vector<float> values(static_cast<std::size_t>(tokens * (prefixes + tokens)));
      std::memcpy(values.data(), matrices.bytes(entry).data(), values.size() * sizeof(float));
      for (std::int64_t i = 0; i < tokens; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < prefixes + tokens; ++j) sum += values[i * (prefixes + tokens) + j];
        EXPECT_NEAR(sum, 1.0, 1e-4) << "layer " << l << " example " << e << " row " << i;
      }
    }
  }
  EXPECT_EQ(slurp(out / "layer0.png").substr(0, 4), "\x89PNG");
  const std::string svg = slurp(out / "layer1.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("encoder.layers.1 self-attention, mean over heads"), std::string::npos);
  EXPECT_NE(svg.find(report["examples"][0]["id"].get<std::string>()), std::string::npos);
}

// A spectrum.json body: P, the per-layer curves and both halves of a 2-layer encoder.
void expect_spectrum(const json& spectrum, std::int64_t prefixes) {
  EXPECT_EQ(spectrum["prefix_length"], prefixes);
  EXPECT_EQ(spectrum["split"], 1);  // half of 2 layers
  ASSERT_EQ(spectrum["layers"].size(), 2u);
  for (const char* half : {"lower", "upper"}) {
    const json& h = spectrum[half];
    ASSERT_TRUE(h.is_object()) << half;
    EXPECT_EQ(h["layers"], json({half[0] == 'l' ? 0 : 1}));
    ASSERT_EQ(h["curve"].size(), static_cast<std::size_t>(prefixes)) << half;
    EXPECT_NEAR(h["curve"].back().get<double>(), 1.0, 1e-9);
    for (std::size_t k = 1; k < h["curve"].size(); ++k)
      EXPECT_GE(h["curve"][k].get<double>(), h["curve"][k - 1].get<double>() - 1e-12);
    EXPECT_GT(h["area"].get<double>(), 0.0);
    EXPECT_LE(h["area"].get<double>(), 1.0 + 1e-12);
  }
}

TEST_F(CliAnalyzeAttention, AModelWithoutPrefixesGivesSquareMaps) {
  const CliResult r = run("analyze attention --quiet --model " + path("plain") + " --data " + path("valid.jsonl") +
                          " --examples 2 --out " + path("plain_maps"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_maps(dir_ / "plain_maps", 2, 0);
  EXPECT_FALSE(fs::exists(dir_ / "plain_maps" / "spectrum.json"));
  EXPECT_NE(r.out.find("prefix mass"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("entropy (nats)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((dir_ / "plain_maps" / "layer1.svg").string()), std::string::npos) << r.out;
}

TEST_F(CliAnalyzeAttention, PrefixColumnsComeFirstAndTheSpectrumIsWritten) {
  const CliResult r = run("analyze attention --quiet --model " + path("prefixed") + " --data " + path("valid.jsonl") +
                          " --out " + path("prefixed_maps"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_maps(dir_ / "prefixed_maps", 4, 4);  // the default 4 examples
  expect_spectrum(json::parse(slurp(dir_ / "prefixed_maps" / "spectrum.json")), 4);
  EXPECT_NE(slurp(dir_ / "prefixed_maps" / "layer0.svg").find("keys: 4 prefix |"), std::string::npos);
}

TEST_F(CliAnalyzeAttention, ATunedPrefixAdapterLoadsOntoItsBase) {
  const CliResult r = run("analyze attention --quiet --model " + path("plain") + " --adapter " +
                          path("tuned/adapter.safetensors") + " --data " + path("valid.jsonl") + " --examples 1 --out " +
                          path("tuned_maps"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_maps(dir_ / "tuned_maps", 1, 4);
  EXPECT_EQ(json::parse(slurp(dir_ / "tuned_maps" / "attention.json"))["adapter"], path("tuned/adapter.safetensors"));
}

TEST_F(CliAnalyzeAttention, FewerExamplesThanAskedAreUsedAndSaidSo) {
  const CliResult r = run("analyze attention --quiet --model " + path("plain") + " --data " + path("valid.jsonl") +
                          " --examples 10 --out " + path("few"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("has 4 usable examples, fewer than --examples 10; using 4"), std::string::npos) << r.err;
  EXPECT_EQ(json::parse(slurp(dir_ / "few" / "attention.json"))["examples"].size(), 4u);
}

TEST_F(CliAnalyzeAttention, SpectrumComparesModels) {
  const CliResult r = run("analyze spectrum --quiet --model " + path("prefixed") + " --model " + path("tuned") +
                          " --label Dense --label Tuned --data " + path("valid.jsonl") + " --examples 3 --out " +
                          path("spectrum"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(slurp(dir_ / "spectrum" / "spectrum.json"));
  ASSERT_EQ(report["models"].size(), 2u);
  EXPECT_EQ(report["models"][0]["label"], "Dense");
  EXPECT_EQ(report["models"][1]["label"], "Tuned");
  for (const json& model : report["models"]) {
    EXPECT_EQ(model["examples"], 3);
    expect_spectrum(model, 4);
  }
  const std::string svg = slurp(dir_ / "spectrum" / "spectrum.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  for (const char* text : {"Lower encoder layers", "Upper encoder layers", "Dense", "Tuned",
                           "normalised cumulative singular value"})
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  EXPECT_NE(r.out.find("k@0.9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Tuned"), std::string::npos) << r.out;
}

// --per-head: each head's own map gives a curve; the same examples, another (valid) curve.
TEST_F(CliAnalyzeAttention, SpectrumPerHeadAveragesEachHeadsCurve) {
  const std::string common = "analyze spectrum --quiet --model " + path("prefixed") + " --data " + path("valid.jsonl") +
                             " --examples 3 --out ";
  const CliResult averaged = run(common + path("spectrum_mean"));
  const CliResult heads = run(common + path("spectrum_heads") + " --per-head");
  ASSERT_EQ(averaged.exit_code, 0) << averaged.err;
  ASSERT_EQ(heads.exit_code, 0) << heads.err;
  const json mean = json::parse(slurp(dir_ / "spectrum_mean" / "spectrum.json"))["models"][0];
  const json per_head = json::parse(slurp(dir_ / "spectrum_heads" / "spectrum.json"))["models"][0];
  EXPECT_EQ(mean["per_head"], false);
  EXPECT_EQ(per_head["per_head"], true);
  EXPECT_EQ(per_head["examples"], 3);  // examples, not curves
  expect_spectrum(per_head, 4);
  double largest = 0;
  for (std::size_t k = 0; k < 4; ++k)
    largest = std::max(largest, std::abs(per_head["lower"]["curve"][k].get<double>() -
                                         mean["lower"]["curve"][k].get<double>()));
  EXPECT_GT(largest, 1e-6);
  EXPECT_NE(heads.out.find("each head's own map"), std::string::npos) << heads.out;
}

TEST_F(CliAnalyzeAttention, SpectrumOfAModelWithoutPrefixesIsAClearError) {
  const CliResult r = run("analyze spectrum --quiet --model " + path("prefixed") + " --model " + path("plain") +
                          " --data " + path("valid.jsonl") + " --out " + path("no_spectrum"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(path("plain") + ": the model has no prefixes"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "no_spectrum" / "spectrum.json"));
}

TEST_F(CliAnalyzeAttention, RejectsBadInput) {
  const std::string data = " --data " + path("valid.jsonl");
  for (const char* bad : {"0", "17", "many"}) {
    const CliResult r = run("analyze attention --model " + path("plain") + data + " --examples " + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("--examples"), std::string::npos) << bad << ": " << r.err;
  }
  const CliResult lm = run("analyze attention --model " + path("lm") + data);
  EXPECT_NE(lm.exit_code, 0);
  EXPECT_NE(lm.err.find("this command needs a seq2seq"), std::string::npos) << lm.err;
  const CliResult lm_spectrum = run("analyze spectrum --model " + path("lm") + data);
  EXPECT_NE(lm_spectrum.exit_code, 0);
  EXPECT_NE(lm_spectrum.err.find("this command needs a seq2seq"), std::string::npos) << lm_spectrum.err;
  const CliResult labels = run("analyze spectrum --model " + path("prefixed") + " --label a --label b" + data);
  EXPECT_NE(labels.exit_code, 0);
  EXPECT_NE(labels.err.find("--label: 2 labels for 1 models"), std::string::npos) << labels.err;
  const CliResult missing = run("analyze attention --model " + path("plain") + " --data " + path("none.jsonl"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("none.jsonl"), std::string::npos) << missing.err;
  const CliResult no_data = run("analyze spectrum --model " + path("prefixed"));
  EXPECT_NE(no_data.exit_code, 0);
  EXPECT_NE(no_data.err.find("--data"), std::string::npos) << no_data.err;
}

}  // namespace
}  // namespace strata
