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
  at::Tensor logits(const at::Tensor& ids, nn::KvCache*, const at::Tensor&) override { return table(ids); }
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

  // Trains `architecture` through recipes::run_training (what `strata train` calls) on a text
  // whose words follow a fixed cycle, then continues "alpha" through the registry's stepper
  // after recipes::load_model; returns the continuation of as many tokens as the cycle's rest.
  std::string train_and_continue(const std::string& architecture, const std::vector<std::string>& settings,
                                 std::int64_t steps) {
    std::string text;
    for (int i = 0; i < 200; ++i) text += "alpha beta gamma delta ";
    { std::ofstream(dir_ / "train.txt") << text << "\n"; }
    const std::vector<std::string> texts = {text};
    ByteBpeTokenizer::train(texts, 300, SpecialTokens{})->save(dir_ / "tokenizer");

    Config config;
    config.apply_override("model.architecture=\"" + architecture + "\"");
    config.apply_override("train.max_steps=" + std::to_string(steps));
    config.apply_override("train.eval_every=" + std::to_string(steps));
    config.apply_override("train.log_every=" + std::to_string(steps));
    for (const char* o : {"data.block_size=32", "train.warmup_steps=0", "train.label_smoothing=0.0",
                          "train.weight_decay=0.0"})
      config.apply_override(o);
    for (const std::string& o : settings) config.apply_override(o);
    config.apply_override("data.train=\"" + (dir_ / "train.txt").string() + "\"");
    config.apply_override("data.valid=\"" + (dir_ / "train.txt").string() + "\"");
    config.apply_override("data.tokenizer=\"" + (dir_ / "tokenizer").string() + "\"");
    config.validate(run_schema());
    const train::TrainResult result = run_training(config, {dir_ / "run", false, true, ""});
    EXPECT_EQ(result.steps, steps);

    LoadedModel loaded = load_model(dir_ / "run");
    const std::vector<std::int32_t> prompt = loaded.tokenizer->encode("alpha");
    const at::Tensor ids = torch::tensor(std::vector<std::int64_t>(prompt.begin(), prompt.end())).view({1, -1});
    std::unique_ptr<decode::StepModel> stepper = find_architecture(architecture).stepper(loaded.module, {ids, {}});
    decode::GenerationOptions options;
    options.eos_id = *loaded.tokenizer->eos_id();
    options.pad_id = *loaded.tokenizer->pad_id();
    options.max_length = static_cast<std::int64_t>(loaded.tokenizer->encode(" beta gamma delta alpha").size());
    const decode::Sequences out = decode::generate(*stepper, options);
    EXPECT_EQ(out.size(), 1u);
    last_module_ = loaded.module;
    return loaded.tokenizer->decode(std::vector<std::int32_t>(out.at(0).begin(), out.at(0).end()));
  }

  fs::path dir_;
  std::shared_ptr<torch::nn::Module> last_module_;
};

TEST_F(ArchitectureRegistry, AToyFamilyTrainsAndDecodesThroughTheSameEntryPoints) {
  static const bool registered = [] {
    register_architecture(toy_bigram());
    return true;
  }();
  ASSERT_TRUE(registered);
  // A bigram model can learn the cycle exactly.
  EXPECT_EQ(train_and_continue("toy_bigram", {"train.learning_rate=0.1"}, 60), " beta gamma delta alpha");
  EXPECT_NE(std::dynamic_pointer_cast<ToyBigramImpl>(last_module_), nullptr);

  // The name is taken now, and an unknown name says which ones exist.
  EXPECT_NE(error_of([] { register_architecture(toy_bigram()); }).find("is taken"), std::string::npos);
  const std::string unknown = error_of([] { find_architecture("toy_bigramm"); });
  EXPECT_NE(unknown.find("did you mean 'toy_bigram'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("seq2seq, causal_lm, encoder, bst_lm"), std::string::npos) << unknown;
}

TEST_F(ArchitectureRegistry, TheBlockStateLmTrainsAndDecodesAsABuiltIn) {
  // A SLIDE layer in blocks of 8 tokens under a BST layer (SH, S4D): registered in
  // builtin_architectures like the others, trained and continued the same way.
  const std::string continuation = train_and_continue(
      "bst_lm",
      {"model.d_model=32", "model.heads=4", "model.d_ff=64", "model.decoder_layers=2", "model.bst_layers=\"1\"",
       "model.bst_window=8", "model.dropout=0.0", "model.pre_norm=true", "train.learning_rate=0.01"},
      80);
  EXPECT_EQ(continuation, " beta gamma delta alpha");
  EXPECT_NE(std::dynamic_pointer_cast<models::LanguageModel>(last_module_), nullptr);
}

}  // namespace
}  // namespace strata::recipes
