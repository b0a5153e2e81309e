// `strata import hf`, `forward`, `generate` and `export hf` run as a user would on a checkpoint
// transformers wrote: the numbers and tokens it recorded come back, and bad input is an error
// naming the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/hf_fixtures.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::hf_fixtures;
using test_support::slurp;

class CliHf : public test_support::HfScratchTest {
 protected:
  test_support::CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
};

TEST_F(CliHf, ImportForwardGenerateExport) {
  const fs::path bart = hf_fixtures() / "bart";
  const auto imported = run("import hf " + bart.string() + " --out " + (dir_ / "run").string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported BartForConditionalGeneration (bart): 92 tensors"), std::string::npos)
      << imported.out;

  const auto forward = run("forward --model " + (dir_ / "run").string() + " --inputs " +
                           (bart / "inputs.json").string() + " --out " + (dir_ / "forward.json").string());
  ASSERT_EQ(forward.exit_code, 0) << forward.err;
  const json got = json::parse(slurp(dir_ / "forward.json"));
  const json expected = json::parse(slurp(bart / "forward.json"));
  EXPECT_EQ(got["logits_shape"], expected["logits_shape"]);
  EXPECT_NEAR(got["logits"][1][5][127].get<double>(), expected["logits"][1][5][127].get<double>(), 1e-4);

  // The transformers directory itself is a model every command takes, imported on the fly.
  const auto direct = run("forward --model " + bart.string() + " --inputs " + (bart / "inputs.json").string() +
                          " --out " + (dir_ / "direct.json").string());
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(json::parse(slurp(dir_ / "direct.json")), got);

  // The run's decoding settings came from generation_config.json; the flags set the length.
  const auto greedy = run("generate --model " + (dir_ / "run").string() + " --inputs " +
                          (bart / "inputs.json").string() + " --max-length 8");
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  const json generated = json::parse(slurp(bart / "generate.json"));
  EXPECT_EQ(json::parse(greedy.out)["sequences"], generated["greedy"]["sequences"]);
  const auto beam = run("generate --model " + (dir_ / "run").string() + " --inputs " +
                        (bart / "inputs.json").string() + " --max-length 8 --beam 3 --kernel reference");
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  EXPECT_EQ(json::parse(beam.out)["sequences"], generated["beam"]["sequences"]);

  const auto exported = run("export hf " + (dir_ / "run").string() + " --out " + (dir_ / "exported").string());
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  for (const char* file : {"config.json", "model.safetensors", "generation_config.json"})
    EXPECT_TRUE(fs::exists(dir_ / "exported" / file)) << file;
  EXPECT_EQ(json::parse(slurp(dir_ / "exported" / "generation_config.json"))["num_beams"], 1);
}

TEST_F(CliHf, BadInputIsAnErrorNamingTheFileAndField) {
  const auto missing = run("import hf " + (dir_ / "nothing").string() + " --out " + (dir_ / "run").string());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nothing: not a directory"), std::string::npos) << missing.err;

  const fs::path gpt2 = hf_fixtures() / "gpt2";
  ASSERT_EQ(run("import hf " + gpt2.string() + " --out " + (dir_ / "run").string()).exit_code, 0);
  const auto again = run("import hf " + gpt2.string() + " --out " + (dir_ / "run").string());
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("already holds a run"), std::string::npos) << again.err;

  std::ofstream(dir_ / "left.json") << R"({"input_ids": [[5, 6, 7], [8, 9, 10]], "attention_mask": [[0, 1, 1], [1, 1, 1]]})";
  const auto left = run("forward --model " + (dir_ / "run").string() + " --inputs " + (dir_ / "left.json").string());
  EXPECT_NE(left.exit_code, 0);
  EXPECT_NE(left.err.find("left.json: attention_mask pads on the left"), std::string::npos) << left.err;

  std::ofstream(dir_ / "ragged.json") << R"({"input_ids": [[5, 6, 7], [8, 999]]})";
  const auto ragged = run("forward --model " + (dir_ / "run").string() + " --inputs " + (dir_ / "ragged.json").string());
  EXPECT_NE(ragged.exit_code, 0);
  EXPECT_NE(ragged.err.find("ragged.json: field 'input_ids' row 1 has another length"), std::string::npos)
      << ragged.err;

  std::ofstream(dir_ / "outside.json") << R"({"input_ids": [[5, 6, 700]]})";
  const auto outside = run("forward --model " + (dir_ / "run").string() + " --inputs " + (dir_ / "outside.json").string());
  EXPECT_NE(outside.exit_code, 0);
  EXPECT_NE(outside.err.find("token ids must be in [0, 128)"), std::string::npos) << outside.err;
}

// An imported BERT with its WordPiece vocabulary tunes like a model of strata's own: its
// config.toml and --base start an extractive run, with LoRA on top.
TEST_F(CliHf, AnImportedModelTunesWithAnAdapter) {
  const fs::path bert = dir_ / "bert";
  fs::create_directories(bert);
  for (const char* file : {"config.json", "model.safetensors"}) fs::copy_file(hf_fixtures() / "bert" / file, bert / file);
  const std::vector<std::string> words = {"alpha", "beta", "gamma", "delta", "zeta", "theta", "kappa", "sigma"};
  std::ofstream vocab(bert / "vocab.txt");
  for (const char* piece : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."}) vocab << piece << "\n";
  for (const std::string& word : words) vocab << word << "\n";
  for (int i = 6 + static_cast<int>(words.size()); i < 128; ++i) vocab << "w" << i << "\n";
  vocab.close();
  for (const char* split : {"train", "valid"}) {  // the second sentence is the summary
    std::ofstream data(dir_ / (std::string(split) + ".jsonl"));
    for (std::size_t i = 0; i < 12; ++i) {
      std::string document, summary;
      for (std::size_t s = 0; s < 4; ++s) {
        std::string sentence;
        for (std::size_t w = 0; w < 5; ++w) sentence += words[(i * 7 + s * 3 + w * 5) % words.size()] + " ";
        sentence.back() = '.';
        document += (s ? " " : "") + sentence;
        if (s == 1) summary = sentence;
      }
      data << json{{"document", document}, {"summary", summary}}.dump() << "\n";
    }
  }
  const auto imported = run("import hf " + bert.string() + " --out " + (dir_ / "run").string());
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("tokenizer wordpiece"), std::string::npos) << imported.out;
  const auto tuned = run("train --quiet --config " + (dir_ / "run" / "config.toml").string() + " --base " +
                         (dir_ / "run").string() + " --adapter lora --out " + (dir_ / "tuned").string() +
                         " data.task=extractive model.head=marker model.num_labels=2 data.train=" +
                         (dir_ / "train.jsonl").string() + " data.valid=" + (dir_ / "valid.jsonl").string() +
                         " data.max_source_tokens=60 train.max_steps=3 train.warmup_steps=1 train.eval_every=3"
                         " train.eval_docs=2 train.max_tokens=1024 train.threads=1 'train.train_only=[\"classifier.*\"]'");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("loaded 39 tensors"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("adapter: lora on 4 linear maps"), std::string::npos) << tuned.out;
  EXPECT_TRUE(fs::exists(dir_ / "tuned" / "checkpoints" / "latest"));
}

}  // namespace
}  // namespace strata
