// The architecture registry: a family registered from test code alone trains through
// recipes::run_training (what `strata train` calls) and decodes through the registry's
// stepper after recipes::load_model, like the built-in families.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/core/config.h"
#include "strata/data/lm_examples.h"
#include "strata/decode/generate.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/language_model.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/loaded_model.h"
#include "strata/recipes/training_run.h"
#include "strata/text/byte_bpe.h"
#include "strata/train/lm_task.h"
#include "strata/train/run_config.h"
#include "support/expect.h"

namespace strata::recipes {
namespace {

using test_support::error_of;

namespace fs = std::filesystem;

// A bigram language model: the logits of the next token are a row of a table indexed by the
// current token. Cached decoding needs no state: only the newest token matters.
class ToyBigramImpl : public models::LanguageModel {
 public:
  explicit ToyBigramImpl(const models::ModelConfig& config) : config_(config) {
    table = register_module("table", torch::nn::Embedding(config.vocab_size, config.vocab_size));
  }
  at::Tensor logits(const at::Tensor& ids, nn::KvCache* cache) override { return table(ids); }
  nn::KvCache new_cache() const override { return nn::KvCache(0); }
  const models::ModelConfig& config() const override { return config_; }

  torch::nn::Embedding table{nullptr};

 private:
  models::ModelConfig config_;
};

Architecture toy_bigram() {
  return {"toy_bigram", "a bigram table (test only)",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return std::make_shared<ToyBigramImpl>(config);
          },
          [](std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) -> std::unique_ptr<train::TrainTask> {
            const std::size_t block = train::data_options(in.run).block_size;
            auto blocks = [&](const fs::path& path) {
              return path.empty() ? train::TokenBlocks{} : load_lm_chunks({path}, in.tokenizer, block, false);
            };
            return std::make_unique<train::LmTask>(std::dynamic_pointer_cast<ToyBigramImpl>(module), blocks(in.train),
                                                   blocks(in.valid));
          },
          [](std::shared_ptr<torch::nn::Module> module, const DecodeInputs& in) -> std::unique_ptr<decode::StepModel> {
            return std::make_unique<decode::CausalLmStepper>(std::dynamic_pointer_cast<ToyBigramImpl>(module), in.ids,
                                                             in.use_cache);
          }};
}

class ArchitectureRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata-registry-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ArchitectureRegistry, AToyFamilyTrainsAndDecodesThroughTheSameEntryPoints) {
  static const bool registered = [] {
    register_architecture(toy_bigram());
    return true;
  }();
  ASSERT_TRUE(registered);

  // A text whose words follow a fixed cycle: a bigram model can learn it exactly.
  std::string text;
  for (int i = 0; i < 200; ++i) text += "alpha beta gamma delta ";
  { std::ofstream(dir_ / "train.txt") << text << "\n"; }
  const std::vector<std::string> texts = {text};
  ByteBpeTokenizer::train(texts, 300, SpecialTokens{})->save(dir_ / "tokenizer");

  Config config;
  for (const char* o : {"model.architecture=\"toy_bigram\"", "data.block_size=32", "train.max_steps=60",
                               "train.learning_rate=0.1", "train.warmup_steps=0", "train.eval_every=60",
                               "train.log_every=60", "train.label_smoothing=0.0", "train.weight_decay=0.0"})
    config.apply_override(o);
  config.apply_override("data.train=\"" + (dir_ / "train.txt").string() + "\"");
  config.apply_override("data.valid=\"" + (dir_ / "train.txt").string() + "\"");
  config.apply_override("data.tokenizer=\"" + (dir_ / "tokenizer").string() + "\"");
  config.validate(run_schema());
  const train::TrainResult result = run_training(config, {dir_ / "run", false, true, ""});
  EXPECT_EQ(result.steps, 60);

  LoadedModel loaded = load_model(dir_ / "run");
  ASSERT_NE(std::dynamic_pointer_cast<ToyBigramImpl>(loaded.module), nullptr);
  const std::vector<std::int32_t> prompt = loaded.tokenizer->encode("alpha");
  const at::Tensor ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).view({1, -1});
  std::unique_ptr<decode::StepModel> stepper = find_architecture("toy_bigram").stepper(loaded.module, {ids, {}});
  decode::GenerationOptions options;
  options.eos_id = *loaded.tokenizer->eos_id();
  options.pad_id = *loaded.tokenizer->pad_id();
  options.max_length = static_cast<std::int64_t>(loaded.tokenizer->encode(" beta gamma delta alpha").size());
  const decode::Sequences out = decode::generate(*stepper, options);
  ASSERT_EQ(out.size(), 1u);
  const std::vector<std::int32_t> continuation(out[0].begin(), out[0].end());
  EXPECT_EQ(loaded.tokenizer->decode(continuation), " beta gamma delta alpha");

  // The name is taken now, and an unknown name says which ones exist.
  EXPECT_NE(error_of([] { register_architecture(toy_bigram()); }).find("is taken"), std::string::npos);
  const std::string unknown = error_of([] { find_architecture("toy_bigramm"); });
  EXPECT_NE(unknown.find("did you mean 'toy_bigram'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("seq2seq, causal_lm, encoder"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace strata::recipes
