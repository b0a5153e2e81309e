// The Jensen-Shannon divergence between two models' attention rows (seed 003 §3.1.2), against
// hand-computed values.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/analysis/attention_agreement.h"
#include "strata/core/error.h"

namespace strata::analysis {
namespace {

double kl(std::initializer_list<double> p, std::initializer_list<double> q) {
  double out = 0;
  auto qi = q.begin();
  for (const double pi : p) {
    if (pi > 0) out += pi * std::log(pi / *qi);
    ++qi;
  }
  return out;
}

TEST(AttentionAgreement, JsdOfEachRealQueryAveragedOverTheQueries) {
  // One example of 2 real tokens in a row of 3 (the third is padding), one head.
  // Query 0: p = (1, 0), q = (0.5, 0.5); query 1: p = q = (0.25, 0.75). The padded key carries
  // weight in both (it must be ignored) and the padded query disagrees completely.
  const at::Tensor a = torch::tensor({1.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.0, 0.0, 1.0}, torch::kFloat).view({1, 1, 3, 3});
  const at::Tensor b = torch::tensor({0.5, 0.5, 0.0, 0.25, 0.75, 0.0, 1.0, 0.0, 0.0}, torch::kFloat).view({1, 1, 3, 3});
  const double jsd0 = (kl({1.0, 0.0}, {0.75, 0.25}) + kl({0.5, 0.5}, {0.75, 0.25})) / 2;
  const at::Tensor got = attention_jsd_sums(a, b, torch::tensor({2}));
  ASSERT_EQ(got.sizes(), (std::vector<std::int64_t>{1, 1}));
  EXPECT_NEAR(got.item<double>(), (jsd0 + 0.0) / 2, 1e-12);
}

TEST(AttentionAgreement, ZeroForTheSameWeightsAndAtMostLnTwo) {
  torch::manual_seed(3);
  const at::Tensor a = torch::softmax(torch::randn({2, 3, 5, 5}), -1);
  const at::Tensor lengths = torch::tensor({5, 3});
  EXPECT_LT(attention_jsd_sums(a, a, lengths).abs().max().item<double>(), 1e-12);
  // Disjoint one-hot rows: every query at ln 2.
  const at::Tensor first = torch::zeros({1, 1, 2, 2}).index_put_({0, 0, torch::indexing::Slice(), 0}, 1.0);
  const at::Tensor second = torch::zeros({1, 1, 2, 2}).index_put_({0, 0, torch::indexing::Slice(), 1}, 1.0);
  EXPECT_NEAR(attention_jsd_sums(first, second, torch::tensor({2})).item<double>(), std::log(2.0), 1e-12);
  const at::Tensor b = torch::softmax(torch::randn({2, 3, 5, 5}), -1);
  const at::Tensor jsd = attention_jsd_sums(a, b, lengths);
  EXPECT_GT(jsd.min().item<double>(), 0.0);
  EXPECT_LE(jsd.max().item<double>(), std::log(2.0));
  // Symmetric.
  EXPECT_TRUE(torch::allclose(jsd, attention_jsd_sums(b, a, lengths), 1e-12, 1e-12));
}

TEST(AttentionAgreement, MismatchedShapesAreErrors) {
  const at::Tensor a = torch::zeros({1, 1, 2, 2});
  EXPECT_THROW(attention_jsd_sums(a, torch::zeros({1, 2, 2, 2}), torch::tensor({2})), Error);
  EXPECT_THROW(attention_jsd_sums(a, a, torch::tensor({2, 2})), Error);
  EXPECT_THROW(attention_jsd_sums(torch::zeros({1, 1, 2, 3}), torch::zeros({1, 1, 2, 3}), torch::tensor({2})), Error);
}

}  // namespace
}  // namespace strata::analysis
