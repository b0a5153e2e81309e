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

}  // namespace
}  // namespace strata::nn
