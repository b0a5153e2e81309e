// `strata analyze biases` on tiny models trained with HIBRIDS tables (seed 001 Figure 5): the
// figures and biases.json it writes, their agreement with the checkpoint's weights, and its
// errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/safetensors.h"
#include "support/cli.h"
#include "support/toy_words.h"
#include "support/expect.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::CliResult;
using test_support::slurp;

class CliAnalyze : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_analyze_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    test_support::ToyWords toy(11);
    auto sentence = [&] { return toy.words(8) + "."; };
    // Native documents with a section tree (tool > usage > options, tool > notes), so that
    // the tables see pairs of different sections and learn from them.
    for (const char* split : {"train", "valid"}) {
      std::ofstream out(dir_ / (std::string(split) + ".jsonl"));
      for (int i = 0; i < (split[0] == 't' ? 24 : 4); ++i) {
        const std::string summary = toy.words(4);
        const json options = {{"heading", "options"}, {"paragraphs", {sentence()}}};
        const json usage = {{"heading", "usage"}, {"paragraphs", {sentence()}}, {"sections", {options}}};
        const json notes = {{"heading", "notes"}, {"paragraphs", {sentence()}}};
        out << json{{"id", std::string(split) + std::to_string(i)}, {"title", "tool"},
                    {"paragraphs", {summary + "."}}, {"sections", {usage, notes}}, {"summary", summary}}
                   .dump()
            << "\n";
      }
    }
    ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("tok") +
                  " --vocab-size 300 --type byte-bpe")
                  .exit_code,
              0);
    // Model "both": HIBRIDS on every encoder layer and HIBRIDS_S on the decoder. Model "mixed":
    // a different tree relation on each encoder layer, no decoder table.
    train("both", "encoder_attention = '{\"bias\": {\"kind\": \"hibrids\", \"max_path\": 4, \"max_level\": 2}}'\n"
                  "decoder_hibrids = '{\"kind\": \"hibrids_selected\"}'\n");
    train("mixed",
          "encoder_attention = '[{\"bias\": {\"kind\": \"hibrids\", \"max_path\": 2, \"max_level\": 1, "
          "\"asymmetric\": false}}, {\"bias\": {\"kind\": \"hibrids_selected\"}}]'\n");
    // Model "hierenc": HIBRIDS in one section layer of HIERENC (seed 001 Table 5) only.
    train("hierenc", "section_encoder_layers = 1\n"
                     "section_encoder_hibrids = '{\"kind\": \"hibrids\", \"max_path\": 4, \"max_level\": 2}'\n");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static void train(const std::string& name, const std::string& attention) {
    std::ofstream(dir_ / (name + ".toml"))
        << "[model]\nd_model = 32\nheads = 2\nd_ff = 64\nencoder_layers = 2\ndecoder_layers = 2\n"
           "max_positions = 128\n"
        << attention << "[data]\ntrain = \"" << path("train.jsonl") << "\"\nvalid = \"" << path("valid.jsonl")
        << "\"\ntokenizer = \"" << path("tok")
        << "\"\nmax_source_tokens = 64\n"
           "[train]\nmax_steps = 4\nwarmup_steps = 1\nlearning_rate = 0.01\neval_every = 4\neval_docs = 2\n"
           "max_tokens = 512\nthreads = 1\n"
           "[decode]\nbeam_size = 1\nmax_length = 4\n";
    const CliResult trained = run("train --quiet --config " + path(name + ".toml") + " --out " + path(name));
    ASSERT_EQ(trained.exit_code, 0) << name << ": " << trained.err;
  }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  // The mean over heads of a [H, R] F32 table of a checkpoint.
  static std::vector<double> head_mean(const fs::path& checkpoint, const std::string& tensor) {
    const SafetensorsFile file(checkpoint / "model.safetensors");
    const TensorEntry& entry = file.entry(tensor);
    EXPECT_EQ(entry.dtype, "F32");
    EXPECT_EQ(entry.shape.size(), 2u);
    const std::int64_t heads = entry.shape[0], count = entry.shape[1];
    std::vector<float> values(static_cast<std::size_t>(heads * count));
    std::memcpy(values.data(), file.bytes(entry).data(), values.size() * sizeof(float));
    std::vector<double> mean(static_cast<std::size_t>(count), 0.0);
    for (std::int64_t h = 0; h < heads; ++h)
      for (std::int64_t r = 0; r < count; ++r) mean[r] += values[h * count + r] / static_cast<double>(heads);
    return mean;
  }

  static fs::path dir_;
};
fs::path CliAnalyze::dir_;

TEST_F(CliAnalyze, DrawsEncoderAndDecoderFiguresAndTheirJson) {
  const CliResult r = run("analyze biases --model " + path("both"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_ / "both" / "biases";
  for (const char* file : {"encoder.svg", "encoder.png", "decoder.svg", "decoder.png", "biases.json"})
    EXPECT_TRUE(fs::exists(out / file)) << file;
  EXPECT_NE(r.out.find("encoder.layers.0.self_attn.relation_bias, encoder.layers.1.self_attn.relation_bias"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("decoder.hibrids_bias"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest positive (× 100):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("largest negative (× 100):"), std::string::npos) << r.out;

  const std::string svg = slurp(out / "encoder.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("HIBRIDS-ENC: hibrids(max_path=4, max_level=2), mean over 2 tables × 2 heads"),
            std::string::npos);
  EXPECT_NE(svg.find("values × 100; blue positive, orange negative; rows: query section, columns: key section"),
            std::string::npos);
  EXPECT_NE(svg.find(">§1.1.1.1</text>"), std::string::npos);
  EXPECT_EQ(test_support::count_occurrences(svg, "<g><title>"), 49u);  // 7 × 7 sections
  EXPECT_NE(slurp(out / "decoder.svg").find("HIBRIDS-DEC: hibrids_selected, mean over 1 table × 2 heads"),
            std::string::npos);
  const std::string png = slurp(out / "encoder.png");
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");

  const json report = json::parse(slurp(out / "biases.json"));
  ASSERT_EQ(report["figures"].size(), 2u);
  const json& enc = report["figures"][0];
  EXPECT_EQ(enc["name"], "encoder");
  EXPECT_EQ(enc["sections"], json({"1", "1.1", "1.1.1", "1.1.1.1", "1.2", "2", "2.1"}));
  ASSERT_EQ(enc["table"].size(), 45u);
  // The mean table is the heads' and layers' mean of the checkpoint's weights …
  const fs::path checkpoint = report["model"].get<std::string>();
  EXPECT_EQ(checkpoint.filename(), "step-00000004");
  const std::vector<double> layer0 = head_mean(checkpoint, "encoder.layers.0.self_attn.relation_bias");
  const std::vector<double> layer1 = head_mean(checkpoint, "encoder.layers.1.self_attn.relation_bias");
  double largest = 0;
  for (std::size_t id = 0; id < 45; ++id) {
    EXPECT_NEAR(enc["table"][id]["value"].get<double>(), (layer0[id] + layer1[id]) / 2, 1e-6) << id;
    largest = std::max(largest, std::abs(enc["table"][id]["value"].get<double>()));
  }
  EXPECT_GT(largest, 1e-3);  // training moved the tables away from their zero start
  // … and each cell reads its relation's entry: §1.1 to §1 is (-1, -1), id (−1 + 4) · 5 + 1.
  EXPECT_EQ(enc["relations"][1][0], "(-1, -1)");
  EXPECT_EQ(enc["ids"][1][0], 16);
  EXPECT_EQ(enc["values"][1][0], enc["table"][16]["value"]);
  const json& dec = report["figures"][1];
  EXPECT_EQ(dec["name"], "decoder");
  EXPECT_EQ(dec["relations"][1][0], "parent");
  const std::vector<double> hibrids_s = head_mean(checkpoint, "decoder.hibrids_bias");
  for (std::size_t id = 0; id < 11; ++id)
    EXPECT_NEAR(dec["table"][id]["value"].get<double>(), hibrids_s[id], 1e-6) << id;
}

TEST_F(CliAnalyze, LayersAndFormatChooseTheFigures) {
  const CliResult r = run("analyze biases --model " + path("both") + " --layers decoder --format png --out " +
                          path("dec-only"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "dec-only" / "decoder.png"));
  EXPECT_FALSE(fs::exists(dir_ / "dec-only" / "decoder.svg"));
  EXPECT_FALSE(fs::exists(dir_ / "dec-only" / "encoder.png"));
  const json report = json::parse(slurp(dir_ / "dec-only" / "biases.json"));
  ASSERT_EQ(report["figures"].size(), 1u);
  EXPECT_EQ(report["figures"][0]["files"], json({"decoder.png"}));
}

TEST_F(CliAnalyze, LayersWithDifferentRelationsGetAFigureEach) {
  const CliResult r = run("analyze biases --model " + path("mixed") + " --format svg");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_ / "mixed" / "biases";
  EXPECT_NE(slurp(out / "encoder-1.svg").find("hibrids(max_path=2, max_level=1, symmetric path), mean over 1 table"),
            std::string::npos);
  EXPECT_NE(slurp(out / "encoder-2.svg").find("hibrids_selected"), std::string::npos);
  const json report = json::parse(slurp(out / "biases.json"));
  ASSERT_EQ(report["figures"].size(), 2u);
  EXPECT_EQ(report["figures"][0]["relations"][1][0], "(±1, -1)");
  EXPECT_EQ(report["figures"][0]["tables"], json({"encoder.layers.0.self_attn.relation_bias"}));
}

TEST_F(CliAnalyze, DrawsTheTablesOfHierencsSectionLayers) {
  const CliResult r = run("analyze biases --model " + path("hierenc") + " --format svg");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir_ / "hierenc" / "biases";
  EXPECT_NE(slurp(out / "sections.svg").find("HIBRIDS in the HIERENC section layers: hibrids(max_path=4, max_level=2)"),
            std::string::npos);
  const json report = json::parse(slurp(out / "biases.json"));
  ASSERT_EQ(report["figures"].size(), 1u);
  const json& figure = report["figures"][0];
  EXPECT_EQ(figure["tables"], json({"section_encoder.layers.0.self_attn.relation_bias"}));
  const std::vector<double> table = head_mean(report["model"].get<std::string>(), "section_encoder.layers.0.self_attn.relation_bias");
  double largest = 0;
  for (std::size_t id = 0; id < 45; ++id) {
    EXPECT_NEAR(figure["table"][id]["value"].get<double>(), table[id], 1e-6) << id;
    largest = std::max(largest, std::abs(table[id]));
  }
  EXPECT_GT(largest, 1e-3);  // the section layers' tables learned
  const CliResult encoder_only = run("analyze biases --model " + path("hierenc") + " --layers encoder");
  EXPECT_NE(encoder_only.exit_code, 0);
  EXPECT_NE(encoder_only.err.find("its encoder_attention uses no tree relation"), std::string::npos) << encoder_only.err;
}

TEST_F(CliAnalyze, AModelWithoutTreeRelationsIsAnError) {
  const CliResult r = run("analyze biases --model " + path("mixed") + " --layers decoder");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("has no HIBRIDS bias table (its decoder_hibrids uses no tree relation)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "mixed" / "biases" / "decoder.svg"));
  const CliResult bad = run("analyze biases --model " + path("mixed") + " --format jpeg");
  EXPECT_NE(bad.exit_code, 0);
  const CliResult missing = run("analyze biases --model " + path("nowhere"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nowhere"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace strata
