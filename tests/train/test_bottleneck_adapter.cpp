// Bottleneck adapters: the block's numbers, where they go by default, a fresh wrap computing
// exactly its base, and training that moves the adapters alone on each architecture.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "strata/nn/adapters.h"
#include "strata/train/freeze.h"
#include "support/adapter_models.h"
#include "support/expect.h"

namespace strata::nn {
namespace {

using test_support::bottleneck_options;
using test_support::error_of;

TEST(BottleneckAdapter, AddsUpActDownOfItsInput) {
  for (const char* activation : {"relu", "gelu"}) {
    torch::manual_seed(0);
    BottleneckAdapter adapter(6, BottleneckSettings{.size = 3, .activation = activation});
    const at::Tensor y = torch::randn({2, 4, 6});
    EXPECT_TRUE(torch::equal(adapter(y), y));  // up starts at zero
    torch::NoGradGuard no_grad;
    adapter->up->weight.normal_();
    adapter->up->bias.normal_();
    const at::Tensor h = torch::matmul(y, adapter->down->weight.t()) + adapter->down->bias;
    const at::Tensor act = std::string(activation) == "relu" ? torch::relu(h) : torch::gelu(h);
    const at::Tensor expected = y + torch::matmul(act, adapter->up->weight.t()) + adapter->up->bias;
    EXPECT_TRUE(torch::allclose(adapter(y), expected, 1e-6, 1e-6)) << activation;
  }
}

TEST(BottleneckAdapter, RunsOnTheLinearMapsOutput) {
  torch::manual_seed(1);
  AdaptableLinear linear(5, 6);
  const at::Tensor x = torch::randn({3, 5});
  const at::Tensor base = linear(x);
  linear->add_bottleneck({.size = 2});
  torch::NoGradGuard no_grad;
  linear->bottleneck->up->weight.normal_();
  EXPECT_TRUE(torch::allclose(linear(x), linear->bottleneck(base), 0, 1e-6));
  EXPECT_FALSE(torch::allclose(linear(x), base));
}

TEST(BottleneckAdapter, GoesAfterEachAttentionAndFeedForwardByDefault) {
  test_support::TinyModel seq2seq = test_support::tiny_model("seq2seq", 1);
  const AdapterReport report = add_bottleneck(*seq2seq.module, bottleneck_options(4));
  EXPECT_EQ(report.modules,
            (std::vector<std::string>{"encoder.layers.0.self_attn.out_proj", "encoder.layers.0.fc2",
                                      "encoder.layers.1.self_attn.out_proj", "encoder.layers.1.fc2",
                                      "decoder.layers.0.self_attn.out_proj", "decoder.layers.0.encoder_attn.out_proj",
                                      "decoder.layers.0.fc2", "decoder.layers.1.self_attn.out_proj",
                                      "decoder.layers.1.encoder_attn.out_proj", "decoder.layers.1.fc2"}));
  // down 16 x 4 + 4, up 4 x 16 + 16 each.
  EXPECT_EQ(report.parameters, 10 * (64 + 4 + 64 + 16));
  const std::vector<std::string> names = adapter_parameter_names(*seq2seq.module);
  EXPECT_EQ(names.front(), "encoder.layers.0.self_attn.out_proj.bottleneck.down.weight");
  EXPECT_EQ(names.back(), "decoder.layers.1.fc2.bottleneck.up.bias");

  // Not inside a PAL, which is an adapter of its own.
  test_support::TinyModel encoder = test_support::tiny_model("encoder", 1, [](models::ModelConfig& c) {
    c.pal_size = 8;
    c.pal_heads = 2;
  });
  for (const std::string& name : add_bottleneck(*encoder.module, bottleneck_options(4)).modules)
    EXPECT_EQ(name.find(".pal."), std::string::npos) << name;
}

TEST(BottleneckAdapter, WrapsAndTrainsEveryArchitecture) {
  for (const char* architecture : {"seq2seq", "causal_lm", "encoder"}) {
    SCOPED_TRACE(architecture);
    test_support::TinyModel model = test_support::tiny_model(architecture, 12);
    model.module->eval();
    const at::Tensor base = model.output().detach();
    add_bottleneck(*model.module, bottleneck_options(4, "gelu"));
    EXPECT_TRUE(torch::equal(model.output(), base));

    EXPECT_EQ(adapter_patterns(*model.module), (std::vector<std::string>{"*.bottleneck.*"}));
    train::train_only(*model.module, adapter_patterns(*model.module));
    const auto before = test_support::snapshot(*model.module);
    test_support::train_steps(model, 3);
    const std::vector<std::string> names = adapter_parameter_names(*model.module);
    const std::set<std::string> adapter(names.begin(), names.end());
    for (const auto& item : model.module->named_parameters()) {
      const bool moved = !torch::equal(item.value(), before.at(item.key()));
      EXPECT_EQ(moved, adapter.count(item.key()) > 0) << item.key();
    }
    EXPECT_FALSE(torch::allclose(model.output(), base, 1e-4, 1e-4));
  }
}

TEST(BottleneckAdapter, BadSettingsAndUnmatchedPatternsAreErrors) {
  test_support::TinyModel model = test_support::tiny_model("causal_lm", 1);
  EXPECT_EQ(error_of([&] { add_bottleneck(*model.module, bottleneck_options(0)); }),
            "bottleneck.size: must be positive, got 0");
  EXPECT_EQ(error_of([&] { add_bottleneck(*model.module, bottleneck_options(64, "tanh")); }),
            "bottleneck.activation: unknown activation 'tanh' (known: relu, gelu)");
  // A causal LM has no encoder_attn (the default "*_attn.out_proj" finds its self_attn).
  BottleneckOptions cross_only;
  cross_only.targets = {"*.encoder_attn.out_proj"};
  EXPECT_EQ(error_of([&] { add_bottleneck(*model.module, cross_only); }),
            "bottleneck.targets [\"*.encoder_attn.out_proj\"]: '*.encoder_attn.out_proj' matches no adaptable "
            "linear map (their names look like 'decoder.layers.0.self_attn.q_proj')");
  EXPECT_TRUE(adapter_parameter_names(*model.module).empty());
  add_bottleneck(*model.module, bottleneck_options(4));
  BottleneckOptions again;
  again.targets = {"*.fc2"};
  EXPECT_EQ(error_of([&] { add_bottleneck(*model.module, again); }),
            "bottleneck: decoder.layers.0.fc2 has a bottleneck adapter already");
}

}  // namespace
}  // namespace strata::nn
