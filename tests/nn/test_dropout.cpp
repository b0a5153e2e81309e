// nn::dropout: the share it keeps, its scale, its gradient, and the same mask under the same
// seed on any thread count.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/nn/dropout.h"

namespace strata::nn {
namespace {

at::Tensor seeded_dropout(const at::Tensor& x, double p, std::uint64_t seed) {
  torch::manual_seed(seed);
  return strata::nn::dropout(x, p, /*training=*/true);
}

TEST(Dropout, KeepsOneMinusPScaledAndPassesTheMaskToTheGradient) {
  const at::Tensor x = torch::ones({64, 1000}).requires_grad_(true);
  const at::Tensor y = seeded_dropout(x, 0.3, 3);
  const at::Tensor kept = y.ne(0);
  EXPECT_NEAR(kept.to(torch::kDouble).mean().item<double>(), 0.7, 0.01);
  EXPECT_TRUE(torch::allclose(y.masked_select(kept), torch::full({kept.sum().item<std::int64_t>()}, 1.0f / 0.7f)));
  y.sum().backward();
  EXPECT_TRUE(torch::equal(x.grad(), y.detach()));  // d(x * mask) / dx = mask
}

// Backward draws the mask again rather than keeping it: the gradient of any upstream gradient
// must meet the very mask the forward used, on a non-contiguous input too.
TEST(Dropout, BackwardRedrawsTheForwardsMask) {
  const at::Tensor x = torch::randn({300, 40}).t().requires_grad_(true);  // [40, 300], a transpose's strides
  ASSERT_FALSE(x.is_contiguous());
  const at::Tensor y = seeded_dropout(x, 0.4, 5);
  const at::Tensor upstream = torch::randn({40, 300});
  y.backward(upstream);
  const at::Tensor kept = y.detach().ne(0);
  const float scale = 1.0f / 0.6f;
  EXPECT_TRUE(torch::equal(y.detach(), x.detach() * kept.to(torch::kFloat) * scale));
  EXPECT_TRUE(torch::equal(x.grad(), upstream * kept.to(torch::kFloat) * scale));
  EXPECT_NEAR(kept.to(torch::kDouble).mean().item<double>(), 0.6, 0.02);
}

TEST(Dropout, SameSeedSameMaskOnAnyThreadCount) {
  const at::Tensor x = torch::randn({300, 257});
  const int threads = at::get_num_threads();
  const at::Tensor a = seeded_dropout(x, 0.5, 11);
  at::set_num_threads(1);
  const at::Tensor b = seeded_dropout(x, 0.5, 11);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_FALSE(torch::equal(a, seeded_dropout(x, 0.5, 12)));
  // Two calls in a row draw two seeds: two different masks.
  torch::manual_seed(11);
  const at::Tensor first = strata::nn::dropout(x, 0.5, true), second = strata::nn::dropout(x, 0.5, true);
  EXPECT_TRUE(torch::equal(first, a));
  EXPECT_FALSE(torch::equal(first, second));
}

TEST(Dropout, OffOutsideTrainingAndAtTheEnds) {
  const at::Tensor x = torch::randn({4, 5});
  EXPECT_TRUE(strata::nn::dropout(x, 0.5, /*training=*/false).is_same(x));
  EXPECT_TRUE(strata::nn::dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(torch::equal(strata::nn::dropout(x, 1.0, true), torch::zeros_like(x)));
  EXPECT_EQ(strata::nn::dropout(x.to(torch::kBFloat16), 0.5, true).scalar_type(), torch::kBFloat16);
  // fp64 keeps its own scale, not fp32's rounding of 1 / 0.7.
  const at::Tensor y = strata::nn::dropout(torch::ones({1000}, torch::kDouble), 0.3, true);
  EXPECT_EQ(y.max().item<double>(), 1.0 / 0.7);
}

// The fused GELU + dropout against libtorch's GELU followed by nn::dropout under the same seed:
// the same mask, the values and the gradient within GELU's approximation (erf to 1.5e-7), over
// inputs from the tails (where erf saturates and exp underflows) to 0.
TEST(Dropout, GeluDropoutMatchesGeluThenDropout) {
  torch::manual_seed(2);
  const at::Tensor x0 = torch::cat({torch::randn({8, 1000}) * 3, torch::linspace(-20, 20, 1000).view({1, -1})});
  const at::Tensor upstream = torch::randn(x0.sizes());
  auto run = [&](bool fused) {
    const at::Tensor x = x0.clone().requires_grad_(true);
    torch::manual_seed(9);
    const at::Tensor y =
        fused ? strata::nn::gelu_dropout(x, 0.25, true) : strata::nn::dropout(torch::gelu(x), 0.25, true);
    y.backward(upstream);
    return std::make_pair(y.detach(), x.grad());
  };
  const auto [y, dx] = run(true);
  const auto [y_ref, dx_ref] = run(false);
  // The same elements dropped, wherever GELU is clearly not 0.
  const at::Tensor clear = torch::gelu(x0).abs() > 1e-4;
  EXPECT_TRUE(torch::equal(y.ne(0).masked_select(clear), y_ref.ne(0).masked_select(clear)));
  EXPECT_NEAR(y.ne(0).masked_select(clear).to(torch::kDouble).mean().item<double>(), 0.75, 0.02);
  EXPECT_LE((y - y_ref).abs().max().item<double>(), 2e-6);
  EXPECT_LE((dx - dx_ref).abs().max().item<double>(), 3e-6);
  // Outside training it is GELU alone.
  EXPECT_TRUE(torch::equal(strata::nn::gelu_dropout(x0, 0.25, false), torch::gelu(x0)));
}

}  // namespace
}  // namespace strata::nn
