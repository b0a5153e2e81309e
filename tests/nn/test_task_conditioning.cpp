#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/task_conditioning.h"

namespace strata::nn {
namespace {

TEST(Film, IsTheIdentityAtInitialisation) {
  torch::manual_seed(3);
  Film film(8, 5);
  const at::Tensor x = torch::randn({3, 7, 5});
  const at::Tensor z = torch::randn({3, 8});
  EXPECT_TRUE(torch::equal(film(x, z), x));
}

TEST(Film, ScalesByOnePlusGammaAndShiftsByBeta) {
  Film film(2, 3);
  {
    torch::NoGradGuard no_grad;
    film->generator->bias.copy_(torch::tensor({0.5f, 0.0f, -1.0f, 1.0f, 2.0f, 3.0f}));  // γ then β
  }
  const at::Tensor x = torch::ones({1, 2, 3});
  const at::Tensor out = film(x, torch::zeros({1, 2}));
  EXPECT_TRUE(torch::allclose(out[0][1], torch::tensor({2.5f, 3.0f, 3.0f})));
}

TEST(ConditionalAttentionBias, IsZeroAtInitialisation) {
  ConditionalAttentionBias bias(4, 10, 3);
  EXPECT_EQ(bias->block_length(), 4);
  const at::Tensor m = bias(torch::randn({2, 4}));
  EXPECT_EQ(m.sizes(), (std::vector<std::int64_t>{2, 1, 10, 10}));
  EXPECT_EQ(m.abs().sum().item<float>(), 0.0f);
}

TEST(ConditionalAttentionBias, PlacesRowsOnTheirDiagonalBlockAndCropsTheLast) {
  // L = 5, N = 2: s = 3, blocks rows 0-2 (columns 0-2) and rows 3-4 (columns 3-5, cropped to 3-4).
  ConditionalAttentionBias bias(2, 5, 2);
  {
    torch::NoGradGuard no_grad;
    bias->weight.copy_(torch::arange(15, torch::kFloat32).view({5, 3}) + 1);
  }
  const at::Tensor m = bias(torch::zeros({1, 2}))[0][0];
  const at::Tensor expected = torch::tensor({{1.f, 2.f, 3.f, 0.f, 0.f},
                                             {4.f, 5.f, 6.f, 0.f, 0.f},
                                             {7.f, 8.f, 9.f, 0.f, 0.f},
                                             {0.f, 0.f, 0.f, 10.f, 11.f},
                                             {0.f, 0.f, 0.f, 13.f, 14.f}});
  EXPECT_TRUE(torch::equal(m, expected)) << m;
  EXPECT_THROW(ConditionalAttentionBias(2, 5, 6), Error);
}

TEST(ConditionalAttentionBias, ReachesTheFusedKernelWithItsGradient) {
  // The same attention with the bias through the fused kernel and the dense reference one:
  // equal outputs and equal gradients for W0 and the FiLM generator.
  auto run = [](attn::Kernel kernel) {
    torch::manual_seed(11);
    AttentionOptions options;
    options.d_model = 8;
    options.heads = 2;
    options.kernel = kernel;
    MultiHeadAttention attention(options);
    ConditionalAttentionBias bias(4, 6, 2);
    {
      torch::NoGradGuard no_grad;
      bias->weight.normal_();
      bias->film->generator->weight.normal_(0, 0.5);
    }
    const at::Tensor x = torch::randn({2, 6, 8});
    const at::Tensor z = torch::randn({2, 4});
    at::Tensor padding = torch::ones({2, 6}, torch::kBool);
    padding[1][5] = false;
    const at::Tensor out = attention->self_attention(x, padding, false, nullptr, {.bias = bias(z)});
    (out * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
    return std::tuple{out.detach(), bias->weight.grad().clone(), bias->film->generator->weight.grad().clone()};
  };
  const auto [out_fused, w_fused, g_fused] = run(attn::Kernel::Fused);
  const auto [out_ref, w_ref, g_ref] = run(attn::Kernel::Reference);
  EXPECT_TRUE(torch::allclose(out_fused, out_ref, 1e-5, 1e-5));
  EXPECT_GT(w_fused.abs().sum().item<float>(), 0.0f);
  EXPECT_TRUE(torch::allclose(w_fused, w_ref, 1e-4, 1e-5)) << w_fused - w_ref;
  EXPECT_TRUE(torch::allclose(g_fused, g_ref, 1e-4, 1e-5));
}

TEST(ConditionalLayerNorm, ModulatesTheWeightOnly) {
  ConditionalLayerNorm norm(3, 4);
  const at::Tensor weight = torch::tensor({1.f, 2.f, 3.f, 4.f});
  EXPECT_TRUE(torch::equal(norm(weight, torch::randn({2, 3})), weight.view({1, 1, 4}).expand({2, 1, 4})));
}

}  // namespace
}  // namespace strata::nn
