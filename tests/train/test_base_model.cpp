#include <gtest/gtest.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"
#include "strata/nn/transformer_stack.h"
#include "strata/train/base_model.h"
#include "strata/train/checkpoint.h"
#include "support/expect.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using test_support::error_of;

models::ModelConfig tiny_config() {
  models::ModelConfig config;
  config.architecture = "encoder";
  config.vocab_size = 20;
  config.d_model = 16;
  config.heads = 2;
  config.d_ff = 32;
  config.encoder_layers = 2;
  config.max_positions = 32;
  return config;
}

// An encoder with PALs of `pal_size` (0 = none) beside its layers, named as the models name
// theirs: embed_tokens.weight, encoder.layers.0.pal.down.weight, ...
struct TinyEncoder : torch::nn::Module {
  TinyEncoder(const models::ModelConfig& config, std::int64_t pal_size) {
    embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.d_model));
    nn::StackOptions options = models::stack_options(config, models::Stack::Encoder);
    options.layer.pal.size = pal_size;
    options.layer.pal.heads = 2;
    encoder = register_module("encoder", nn::TransformerEncoder(options, embed_tokens));
  }
  torch::nn::Embedding embed_tokens{nullptr};
  nn::TransformerEncoder encoder{nullptr};
};

std::vector<std::string> names_of(const torch::nn::Module& module) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : module_tensors(module)) names.push_back(name);
  return names;
}

class BaseModelTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string name = "strata_base_model_";
    name.append(std::to_string(::getpid())).append("_").append(testing::UnitTest::GetInstance()->current_test_info()->name());
    run_ = fs::temp_directory_path() / name;
    fs::remove_all(run_);
    fs::create_directories(run_);
  }
  void TearDown() override { fs::remove_all(run_); }

  // Saves the module as checkpoint `step` of the run, with `config` as its model config.
  void save(const torch::nn::Module& module, const models::ModelConfig& config, std::int64_t step) {
    CheckpointContents contents;
    contents.weights = module_tensors(module);
    contents.model_config = config.to_json();
    contents.trainer_state.step = step;
    save_checkpoint(checkpoint_dir(run_, step), contents);
    mark_latest_checkpoint(run_, step);
  }

  fs::path run_;
};

TEST_F(BaseModelTest, LoadsTheBestCheckpointIntoAModelWithPals) {
  torch::manual_seed(1);
  const models::ModelConfig config = tiny_config();
  TinyEncoder base(config, 0);
  save(base, config, 5);
  mark_best_checkpoint(run_, 5);
  TinyEncoder later(config, 0);  // the latest checkpoint, not the best: must not be read
  save(later, config, 10);

  TinyEncoder model(config, 8);
  const BaseLoadReport report = load_base_weights(model, config, run_);
  EXPECT_EQ(report.checkpoint, checkpoint_dir(run_, 5));
  EXPECT_EQ(report.loaded, names_of(base));
  EXPECT_TRUE(report.unused.empty());
  ASSERT_EQ(report.missing.size(), 2u * 12u);  // per layer: down, q, k, v, out, up (weight + bias)
  for (const std::string& name : report.missing)
    EXPECT_NE(name.find(".pal."), std::string::npos) << name;

  const auto loaded = model.named_parameters();
  for (const auto& item : base.named_parameters())
    EXPECT_TRUE(torch::equal(loaded[item.key()], item.value())) << item.key();
  EXPECT_TRUE(loaded["encoder.layers.1.pal.up.weight"].eq(0).all().item<bool>());
  EXPECT_EQ(describe(report).rfind("loaded " + std::to_string(report.loaded.size()) + " tensors from ", 0), 0u);
  EXPECT_NE(describe(report).find("24 new (not in the base): encoder.layers.0.pal.down.weight"), std::string::npos)
      << describe(report);
}

TEST_F(BaseModelTest, ReportsTheBaseTensorsTheModelLacks) {
  const models::ModelConfig config = tiny_config();
  TinyEncoder base(config, 8);
  save(base, config, 1);
  TinyEncoder model(config, 0);
  const BaseLoadReport report = load_base_weights(model, config, checkpoint_dir(run_, 1));
  EXPECT_TRUE(report.missing.empty());
  EXPECT_EQ(report.unused.size(), 24u);
  EXPECT_TRUE(std::is_sorted(report.unused.begin(), report.unused.end()));
  EXPECT_EQ(report.loaded, names_of(model));
}

TEST_F(BaseModelTest, AnotherShapeIsAnErrorAndNothingIsCopied) {
  models::ModelConfig wide = tiny_config();
  wide.d_ff = 64;
  save(TinyEncoder(wide, 0), wide, 1);
  const models::ModelConfig config = tiny_config();
  TinyEncoder model(config, 8);
  const at::Tensor before = model.embed_tokens->weight.clone();
  const std::string message = error_of([&] { load_base_weights(model, config, run_); });
  for (const std::string& part : {(checkpoint_dir(run_, 1) / "model.safetensors").string(),
                                 std::string("'encoder.layers.0.fc1.weight'"), std::string("[64, 16]"),
                                 std::string("[32, 16]")})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
  EXPECT_TRUE(torch::equal(model.embed_tokens->weight, before));
}

// train.base_exclude: a name left out is neither copied nor checked for shape; the rest load.
TEST_F(BaseModelTest, ExcludedNamesKeepTheirInitialisationWhateverTheirShape) {
  models::ModelConfig wide = tiny_config();
  wide.d_ff = 64;
  torch::manual_seed(2);
  const TinyEncoder base(wide, 0);
  save(base, wide, 1);
  const models::ModelConfig config = tiny_config();
  TinyEncoder model(config, 0);
  const at::Tensor fc1 = model.named_parameters()["encoder.layers.0.fc1.weight"].clone();
  // d_ff shapes fc1 (weight and bias) and fc2's weight; fc2's bias keeps its shape and loads.
  const BaseLoadReport report =
      load_base_weights(model, config, run_, {}, {"encoder.layers.*.fc1.*", "encoder.layers.*.fc2.weight"});
  EXPECT_EQ(report.excluded, (std::vector<std::string>{"encoder.layers.0.fc1.weight", "encoder.layers.0.fc1.bias",
                                                       "encoder.layers.0.fc2.weight", "encoder.layers.1.fc1.weight",
                                                       "encoder.layers.1.fc1.bias", "encoder.layers.1.fc2.weight"}));
  EXPECT_TRUE(std::find(report.loaded.begin(), report.loaded.end(), "encoder.layers.0.fc2.bias") != report.loaded.end());
  EXPECT_TRUE(report.unused.empty());
  const auto loaded = model.named_parameters();
  EXPECT_TRUE(torch::equal(loaded["encoder.layers.0.fc1.weight"], fc1));
  EXPECT_TRUE(torch::equal(loaded["embed_tokens.weight"], base.named_parameters()["embed_tokens.weight"]));
  EXPECT_NE(describe(report).find("6 left out (train.base_exclude): encoder.layers.0.fc1.weight"), std::string::npos)
      << describe(report);
}

TEST_F(BaseModelTest, TheBaseMustHaveTheSameArchitectureAndSizes) {
  const models::ModelConfig base_config = tiny_config();
  save(TinyEncoder(base_config, 0), base_config, 1);
  TinyEncoder model(base_config, 0);

  models::ModelConfig config = tiny_config();
  config.heads = 4;
  std::string message = error_of([&] { load_base_weights(model, config, run_); });
  EXPECT_NE(message.find("config.json"), std::string::npos) << message;
  EXPECT_NE(message.find("model.heads"), std::string::npos) << message;
  EXPECT_NE(message.find("the base model has 2, the new model 4"), std::string::npos) << message;

  config = tiny_config();
  config.architecture = "seq2seq";
  message = error_of([&] { load_base_weights(model, config, run_); });
  EXPECT_NE(message.find("model.architecture"), std::string::npos) << message;
  EXPECT_NE(message.find("encoder"), std::string::npos) << message;
  EXPECT_NE(message.find("seq2seq"), std::string::npos) << message;

  config = tiny_config();
  config.vocab_size = 21;
  message = error_of([&] { load_base_weights(model, config, run_); });
  EXPECT_NE(message.find("model.vocab_size"), std::string::npos) << message;

  message = error_of([&] { load_base_weights(model, base_config, run_ / "nowhere"); });
  EXPECT_NE(message.find("nowhere"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata::train
