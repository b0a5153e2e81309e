// nn::AdaptableLinear without adapters is torch's Linear: the same draws, names and outputs,
// in a layer and in whole models.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/nn/adaptable_linear.h"
#include "strata/nn/adapters.h"
#include "support/adapter_models.h"

namespace strata::nn {
namespace {

TEST(AdaptableLinear, WithoutAdaptersIsTorchsLinearBitForBit) {
  for (const bool bias : {true, false}) {
    const auto options = torch::nn::LinearOptions(12, 5).bias(bias);
    torch::manual_seed(7);
    torch::nn::Linear plain(options);
    const at::Tensor next_plain = torch::rand({1});  // the generator's state after construction
    torch::manual_seed(7);
    AdaptableLinear adaptable(options);
    const at::Tensor next_adaptable = torch::rand({1});

    EXPECT_TRUE(torch::equal(next_plain, next_adaptable));
    std::vector<std::string> plain_names, adaptable_names;
    for (const auto& p : plain->named_parameters()) plain_names.push_back(p.key());
    for (const auto& p : adaptable->named_parameters()) adaptable_names.push_back(p.key());
    EXPECT_EQ(plain_names, adaptable_names);
    EXPECT_TRUE(torch::equal(plain->weight, adaptable->weight));
    if (bias) {
      EXPECT_TRUE(torch::equal(plain->bias, adaptable->bias));
    }
    // 12 rows, under linear_product's kMinRows: torch's own product, bit for bit
    // (test_linear_product.cpp checks strata's product against it on more rows).
    const at::Tensor x = torch::randn({3, 4, 12});
    EXPECT_TRUE(torch::equal(plain(x), adaptable(x)));
  }
}

TEST(AdaptableLinear, IsFoundAsATorchLinear) {
  AdaptableLinear linear(4, 3);
  torch::nn::Module& module = *linear;
  EXPECT_EQ(module.as<torch::nn::Linear>(), linear.get());
}

// Every linear map of the models is adaptable, and init_weights still finds and draws each
// (N(0, 0.02) weights, zero biases). With the test above (the same construction, draws and
// generator state after) a seeded model's parameters and outputs are those it had before.
TEST(AdaptableLinear, ModelsUseItForEveryLinearMap) {
  for (const char* architecture : {"seq2seq", "causal_lm", "encoder"}) {
    const test_support::TinyModel model = test_support::tiny_model(architecture, 3);
    std::int64_t linears = 0, adaptable = 0;
    for (const auto& module : model.module->modules(/*include_self=*/false)) {
      if (auto* linear = module->as<torch::nn::Linear>()) {
        ++linears;
        EXPECT_NEAR(linear->weight.std().item<double>(), 0.02, 0.006) << architecture;
        if (linear->bias.defined()) {
          EXPECT_EQ(linear->bias.abs().max().item<double>(), 0.0);
        }
      }
      adaptable += module->as<AdaptableLinear>() != nullptr;
    }
    EXPECT_EQ(linears, adaptable) << architecture;
    EXPECT_GT(linears, 0);
  }
}

}  // namespace
}  // namespace strata::nn
