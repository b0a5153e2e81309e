// The seed techniques on imported Hugging Face models: each model is built with the technique,
// takes the imported run's weights as its base (train.base_model's path), runs on the
// fixture's inputs, and trains only what the technique adds.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/config.h"
#include "strata/core/files.h"
#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/recipes/adapters.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/hf_models.h"
#include "strata/train/base_model.h"
#include "support/hf_fixtures.h"

namespace strata::recipes {
namespace hf_techniques_test {

namespace fs = std::filesystem;
using nlohmann::json;

at::Tensor ids_of(const json& inputs, const char* key) {
  std::vector<std::int64_t> values;
  for (const json& row : inputs.at(key))
    for (const json& v : row) values.push_back(v.get<std::int64_t>());
  return torch::tensor(values, torch::kInt64).view({static_cast<std::int64_t>(inputs.at(key).size()), -1});
}

class HfTechniques : public test_support::HfScratchTest {
 protected:
  // Imports `fixture`; its config and inputs.
  models::ModelConfig import(const std::string& fixture) {
    const HfImportReport report = import_hf(test_support::hf_fixtures() / fixture, dir_ / fixture);
    inputs_ = json::parse(read_file(test_support::hf_fixtures() / fixture / "inputs.json"));
    return report.model.config;
  }

  // Copies the imported run's weights into `model`; the names it lacks are the technique's.
  std::vector<std::string> load_base(torch::nn::Module& model, const models::ModelConfig& config,
                                     const std::string& fixture) {
    const train::BaseLoadReport report = train::load_base_weights(model, config, dir_ / fixture);
    EXPECT_TRUE(report.unused.empty()) << train::describe(report);
    return report.missing;
  }

  json inputs_;
};

// Gradients reach every new tensor named in `added`.
void expect_gradients(torch::nn::Module& model, const std::vector<std::string>& added) {
  const auto parameters = model.named_parameters();
  for (const std::string& name : added) {
    const at::Tensor grad = parameters[name].grad();
    ASSERT_TRUE(grad.defined()) << name;
    EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << name;
  }
}

TEST_F(HfTechniques, PrefixTuningOnBart) {
  const models::ModelConfig base_config = import("bart");
  models::ModelConfig config = base_config;
  config.prefix_length = 3;
  config.prefix_hidden = 16;
  models::Seq2Seq base(base_config), tuned(config);
  load_base(*base, base_config, "bart");
  const std::vector<std::string> added = load_base(*tuned, config, "bart");
  ASSERT_FALSE(added.empty());
  for (const std::string& name : added) EXPECT_TRUE(name.starts_with("prefix.")) << name;
  const at::Tensor source = ids_of(inputs_, "input_ids"), target = ids_of(inputs_, "decoder_input_ids");
  const at::Tensor padding = ids_of(inputs_, "attention_mask").ne(0);
  const at::Tensor logits = tuned(source, padding, target);
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  EXPECT_FALSE(torch::allclose(logits, base(source, padding, target)));  // the prefixes are attended
  logits.logsumexp(-1).sum().backward();
  expect_gradients(*tuned, added);
}

TEST_F(HfTechniques, HibridsBiasesOnLedsWindow) {
  const models::ModelConfig base_config = import("led");
  models::ModelConfig config = base_config;
  for (attn::LayerSpec& spec : config.encoder_attention)
    spec.bias = attn::relation_from_json(json{{"kind", "hibrids"}, {"max_path", 4}, {"max_level", 2}});
  models::Seq2Seq base(base_config), hibrids(config);
  base->eval();
  hibrids->eval();
  load_base(*base, base_config, "led");
  const std::vector<std::string> added = load_base(*hibrids, config, "led");
  EXPECT_EQ(added.size(), 2u);  // one relation table per encoder layer
  // Two sections of ten tokens, siblings under the root.
  attn::TokenLayout layout;
  layout.section = torch::arange(20, torch::kInt32).ge(10).to(torch::kInt32).unsqueeze(0).expand({2, 20}).contiguous();
  layout.path_len = torch::tensor({0, 2, 2, 0}, torch::kInt32).view({1, 2, 2}).expand({2, 2, 2}).contiguous();
  layout.lvl_diff = torch::zeros({2, 2, 2}, torch::kInt32);
  const at::Tensor source = ids_of(inputs_, "input_ids"), target = ids_of(inputs_, "decoder_input_ids");
  const at::Tensor padding = ids_of(inputs_, "attention_mask").ne(0);
  const at::Tensor reference = base(source, padding, target);
  // HIBRIDS tables start at zero: the imported model's outputs, unchanged.
  EXPECT_TRUE(torch::allclose(hibrids(source, padding, target, &layout), reference, 1e-5, 1e-5));
  const at::Tensor logits = hibrids(source, padding, target, &layout);
  logits.logsumexp(-1).sum().backward();
  expect_gradients(*hibrids, added);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : hibrids->named_parameters())
      if (p.key().ends_with("relation_bias")) p.value().normal_(0.0, 1.0);
  }
  EXPECT_FALSE(torch::allclose(hibrids(source, padding, target, &layout), reference, 1e-3, 1e-3));
}

TEST_F(HfTechniques, PalsAndInjectedPatternsOnBert) {
  const models::ModelConfig base_config = import("bert");
  const at::Tensor ids = ids_of(inputs_, "input_ids"), types = ids_of(inputs_, "token_type_ids");
  const at::Tensor padding = ids_of(inputs_, "attention_mask").ne(0);
  models::EncoderModel base(base_config);
  base->eval();
  load_base(*base, base_config, "bert");
  const at::Tensor reference = base->encode(ids, padding, nullptr, types);

  models::ModelConfig pal_config = base_config;  // seed 003's PALs beside each layer
  pal_config.pal_size = 8;
  pal_config.pal_heads = 2;
  models::EncoderModel pal(pal_config);
  const std::vector<std::string> added = load_base(*pal, pal_config, "bert");
  ASSERT_FALSE(added.empty());
  for (const std::string& name : added) EXPECT_NE(name.find(".pal."), std::string::npos) << name;
  const at::Tensor hidden = pal->encode(ids, padding, nullptr, types);
  EXPECT_TRUE(torch::isfinite(hidden).all().item<bool>());
  hidden.square().sum().backward();
  // The PAL's output map starts at zero (the base's outputs, unchanged), so the first
  // gradient reaches that map alone; the rest learn once it has moved.
  EXPECT_TRUE(torch::allclose(hidden, reference, 1e-5, 1e-5));
  std::vector<std::string> up;
  for (const std::string& name : added)
    if (name.find(".pal.up.") != std::string::npos) up.push_back(name);
  EXPECT_EQ(up.size(), 4u);  // weight and bias, two layers
  expect_gradients(*pal, up);

  models::ModelConfig injected = base_config;  // seed 003 Eq. 6: two heads fixed to neighbours
  injected.encoder_attention = {attn::layer_spec_from_json(json::parse(
      R"({"heads": [{"mask": "all", "fixed": "previous_token"}, {"mask": "all", "fixed": "next_token"},
                    {"mask": "all"}, {"mask": "all"}]})"))};
  models::EncoderModel patterns(injected);
  patterns->eval();
  EXPECT_TRUE(load_base(*patterns, injected, "bert").empty());  // the weights are the base's
  const attn::TokenLayout layout;
  const at::Tensor changed = patterns->encode(ids, padding, &layout, types);
  EXPECT_TRUE(torch::isfinite(changed).all().item<bool>());
  EXPECT_FALSE(torch::allclose(changed, reference, 1e-3, 1e-3));
}

TEST_F(HfTechniques, LoraOnGpt2) {
  const models::ModelConfig config = import("gpt2");
  models::CausalLm base(config), lora(config);
  base->eval();
  lora->eval();
  load_base(*base, config, "gpt2");
  load_base(*lora, config, "gpt2");
  Config run;
  run.apply_override("adapter.name=lora");
  run.validate(run_schema());
  const auto report = apply_adapter(run, *lora);
  ASSERT_TRUE(report.has_value());
  EXPECT_FALSE(report->modules.empty());
  const at::Tensor ids = ids_of(inputs_, "input_ids");
  // LoRA's B starts at zero: the imported model's logits, unchanged.
  const at::Tensor logits = lora(ids);
  EXPECT_TRUE(torch::allclose(logits, base(ids), 1e-5, 1e-5));
  logits.logsumexp(-1).sum().backward();
  std::size_t lora_grads = 0;
  for (const auto& p : lora->named_parameters())
    if (p.key().find("lora_B") != std::string::npos && p.value().grad().defined()) ++lora_grads;
  EXPECT_EQ(lora_grads, report->modules.size());
}

}  // namespace hf_techniques_test
}  // namespace strata::recipes
