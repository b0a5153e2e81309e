// LoRA: the update's numbers on one linear map, merging and unmerging, a fresh wrap computing
// exactly its base, training that moves the adapter alone on each architecture, and target
// patterns.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <set>

#include "strata/nn/adapters.h"
#include "strata/train/freeze.h"
#include "support/adapter_models.h"
#include "support/expect.h"

namespace strata::nn {
namespace {

using test_support::error_of;

std::set<std::string> as_set(const std::vector<std::string>& names) { return {names.begin(), names.end()}; }

TEST(Lora, AStartsKaimingUniformAndBAtZero) {
  torch::manual_seed(0);
  AdaptableLinear linear(64, 10);
  linear->add_lora({.r = 4, .alpha = 8});
  EXPECT_EQ(linear->lora_A.sizes(), (std::vector<std::int64_t>{4, 64}));
  EXPECT_EQ(linear->lora_B.sizes(), (std::vector<std::int64_t>{10, 4}));
  EXPECT_LE(linear->lora_A.abs().max().item<double>(), 1.0 / 8.0);  // bound 1/sqrt(in)
  EXPECT_GT(linear->lora_A.abs().max().item<double>(), 0.1);
  EXPECT_EQ(linear->lora_B.abs().max().item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(linear->lora_settings().scale(), 2.0);
}

TEST(Lora, AddsScaledBAxToTheLinearMap) {
  torch::manual_seed(1);
  AdaptableLinear linear(6, 5);
  const at::Tensor x = torch::randn({2, 3, 6});
  const at::Tensor base = linear(x);
  linear->add_lora({.r = 2, .alpha = 6});
  EXPECT_TRUE(torch::equal(linear(x), base));  // B = 0
  torch::NoGradGuard no_grad;
  linear->lora_B.normal_();
  const at::Tensor expected = base + 3.0 * torch::matmul(torch::matmul(x, linear->lora_A.t()), linear->lora_B.t());
  EXPECT_TRUE(torch::allclose(linear(x), expected, 1e-6, 1e-6));
}

TEST(Lora, MergingFoldsTheUpdateIntoTheWeightAndUnmergingTakesItOut) {
  torch::manual_seed(2);
  AdaptableLinear linear(8, 8);
  linear->add_lora({.r = 3, .alpha = 3});
  torch::NoGradGuard no_grad;
  linear->lora_B.normal_();
  const at::Tensor weight = linear->weight.clone();
  const at::Tensor x = torch::randn({4, 8});
  const at::Tensor adapted = linear(x);

  linear->merge_lora();
  EXPECT_TRUE(linear->lora_merged());
  EXPECT_TRUE(torch::allclose(linear->weight, weight + torch::mm(linear->lora_B, linear->lora_A), 0, 1e-6));
  EXPECT_TRUE(torch::allclose(linear(x), adapted, 0, 1e-6));
  EXPECT_EQ(error_of([&] { linear->merge_lora(); }), "merging LoRA: it is merged already");

  linear->unmerge_lora();
  EXPECT_TRUE(torch::allclose(linear->weight, weight, 0, 1e-6));
  EXPECT_TRUE(torch::allclose(linear(x), adapted, 0, 1e-6));

  linear->remove_lora();
  EXPECT_FALSE(linear->has_lora());
  EXPECT_EQ(linear->named_parameters().size(), 2u);  // weight, bias
}

TEST(Lora, SettingsAreChecked) {
  EXPECT_EQ(error_of([] { LoraSettings{.r = 0}.check(); }), "lora.r: the rank must be positive, got 0");
  EXPECT_NE(error_of([] { LoraSettings{.alpha = -1}.check(); }).find("lora.alpha: must be positive"), std::string::npos);
  EXPECT_NE(error_of([] { LoraSettings{.dropout = 1.0}.check(); }).find("lora.dropout: must be in [0, 1)"),
            std::string::npos);
}

// The three architectures: a fresh wrap is the base; after training with the base frozen only
// the adapter's tensors moved; merged and unmerged models then agree.
TEST(Lora, WrapsTrainsAndMergesEveryArchitecture) {
  for (const char* architecture : {"seq2seq", "causal_lm", "encoder"}) {
    SCOPED_TRACE(architecture);
    test_support::TinyModel model = test_support::tiny_model(architecture, 11);
    model.module->eval();
    const at::Tensor base = model.output().detach();
    const AdapterReport report = add_lora(*model.module, {.settings = {.r = 2, .alpha = 4}});
    EXPECT_TRUE(torch::equal(model.output(), base));
    ASSERT_FALSE(report.modules.empty());
    for (const std::string& name : report.modules)
      EXPECT_TRUE(name.ends_with(".q_proj") || name.ends_with(".v_proj")) << name;
    // Each map d x d (16) with r 2: A and B hold 2 * 16 * 2 elements.
    EXPECT_EQ(report.parameters, static_cast<std::int64_t>(report.modules.size()) * 64);

    const std::vector<std::string> patterns = adapter_patterns(*model.module);
    EXPECT_EQ(patterns, (std::vector<std::string>{"*.lora_A", "*.lora_B"}));
    train::train_only(*model.module, patterns);
    const auto before = test_support::snapshot(*model.module);
    test_support::train_steps(model, 3);
    const std::set<std::string> adapter = as_set(adapter_parameter_names(*model.module));
    EXPECT_EQ(adapter.size(), 2 * report.modules.size());
    for (const auto& item : model.module->named_parameters()) {
      const bool moved = !torch::equal(item.value(), before.at(item.key()));
      EXPECT_EQ(moved, adapter.count(item.key()) > 0) << item.key();
    }

    const at::Tensor adapted = model.output().detach();
    EXPECT_FALSE(torch::allclose(adapted, base, 1e-4, 1e-4));
    const std::vector<std::string> merged = merge_lora(*model.module, LoraMerge::KeepAdapter);
    EXPECT_EQ(merged, report.modules);
    EXPECT_TRUE(torch::allclose(model.output(), adapted, 0, 1e-6));
    unmerge_lora(*model.module);
    EXPECT_TRUE(torch::allclose(model.output(), adapted, 0, 1e-6));
    merge_lora(*model.module);  // and unload
    EXPECT_TRUE(adapter_parameter_names(*model.module).empty());
    EXPECT_EQ(model.module->named_parameters().size(), before.size() - adapter.size());
    EXPECT_TRUE(torch::allclose(model.output(), adapted, 0, 1e-6));
  }
}

TEST(Lora, ParametersAreNamedAfterTheirLinearMap) {
  test_support::TinyModel model = test_support::tiny_model("seq2seq", 1);
  add_lora(*model.module, {});
  const std::set<std::string> names = as_set(adapter_parameter_names(*model.module));
  EXPECT_TRUE(names.count("encoder.layers.0.self_attn.q_proj.lora_A"));
  EXPECT_TRUE(names.count("decoder.layers.1.encoder_attn.v_proj.lora_B"));
  EXPECT_EQ(names.size(), 2u * (2 + 2 * 2) * 2);  // {A, B} x {q, v} x (2 encoder + 2 x 2 decoder attentions)
}

TEST(Lora, TargetPatternsSelectTheirModules) {
  test_support::TinyModel seq2seq = test_support::tiny_model("seq2seq", 1);
  EXPECT_EQ(add_lora(*seq2seq.module, {.targets = {"decoder.layers.1.*_attn.k_proj", "lm_head"}}).modules,
            (std::vector<std::string>{"decoder.layers.1.self_attn.k_proj", "decoder.layers.1.encoder_attn.k_proj",
                                      "lm_head"}));
  test_support::TinyModel encoder = test_support::tiny_model("encoder", 1);
  EXPECT_EQ(add_lora(*encoder.module, {.targets = {"classifier", "*.fc?"}}).modules,
            (std::vector<std::string>{"encoder.layers.0.fc1", "encoder.layers.0.fc2", "encoder.layers.1.fc1",
                                      "encoder.layers.1.fc2", "classifier"}));
}

TEST(Lora, APatternThatMatchesNothingIsAnErrorAndChangesNothing) {
  test_support::TinyModel model = test_support::tiny_model("causal_lm", 1);
  EXPECT_EQ(error_of([&] { add_lora(*model.module, {.targets = {"*.q_proj", "*.query"}}); }),
            "lora.targets [\"*.q_proj\", \"*.query\"]: '*.query' matches no adaptable linear map (their names look "
            "like 'decoder.layers.0.self_attn.q_proj')");
  EXPECT_TRUE(adapter_parameter_names(*model.module).empty());
  EXPECT_EQ(error_of([&] { adapter_patterns(*model.module); }),
            "the model has no adapters to train (add LoRA or bottleneck adapters, or build it with prefixes or PALs)");
  add_lora(*model.module, {.targets = {"*.v_proj"}});
  EXPECT_EQ(error_of([&] { add_lora(*model.module, {.targets = {"*.q_proj", "*.v_proj"}}); }),
            "lora: decoder.layers.0.self_attn.v_proj has LoRA already");
  EXPECT_EQ(adapter_parameter_names(*model.module).size(), 4u);  // the v_proj maps' only
}

TEST(Lora, DropoutActsOnTheAdaptersInputWhileTraining) {
  torch::manual_seed(4);
  AdaptableLinear linear(8, 8);
  linear->add_lora({.r = 2, .alpha = 2, .dropout = 0.5});
  torch::NoGradGuard no_grad;
  linear->lora_B.normal_();
  const at::Tensor x = torch::randn({16, 8});
  linear->eval();
  const at::Tensor evaluated = linear(x);
  EXPECT_TRUE(torch::equal(linear(x), evaluated));
  linear->train();
  EXPECT_FALSE(torch::allclose(linear(x), evaluated));
}

}  // namespace
}  // namespace strata::nn
