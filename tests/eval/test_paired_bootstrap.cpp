// Paired bootstrap: a clear winner gets a small p-value, a coin-flip difference a large one,
// a tie p = 1; draws repeat for a seed.
#include <gtest/gtest.h>

#include <vector>

#include "strata/core/error.h"
#include "strata/eval/paired_bootstrap.h"

namespace strata {
namespace {

// Accuracy of two systems over per-example 0/1 correctness.
PairedBootstrap test_accuracy(const std::vector<int>& a, const std::vector<int>& b, std::uint64_t seed = 7) {
  PairedBootstrapOptions options;
  options.seed = seed;
  return paired_bootstrap(
      a.size(),
      [&](std::span<const std::size_t> indices, int system) {
        const std::vector<int>& right = system == 0 ? a : b;
        double sum = 0;
        for (const std::size_t i : indices) sum += right[i];
        return sum / static_cast<double>(indices.size());
      },
      options);
}

TEST(PairedBootstrap, ClearWinnerHasSmallPValue) {
  std::vector<int> a(200), b(200);
  for (int i = 0; i < 200; ++i) a[i] = i % 10 != 0, b[i] = i % 2;  // 90 % against 50 %
  const PairedBootstrap result = test_accuracy(a, b);
  EXPECT_DOUBLE_EQ(result.a, 0.9);
  EXPECT_DOUBLE_EQ(result.b, 0.5);
  EXPECT_LT(result.p_value, 0.01);
  EXPECT_EQ(result.resamples, 1000u);
  // The direction does not matter: B against A is the same test.
  EXPECT_LT(test_accuracy(b, a).p_value, 0.01);
}

TEST(PairedBootstrap, SmallDifferenceIsNotSignificant) {
  std::vector<int> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[i] = i < 51, b[i] = i >= 50;  // 51 % against 50 %, disagreeing often
  const PairedBootstrap result = test_accuracy(a, b);
  EXPECT_GT(result.p_value, 0.2);
}

TEST(PairedBootstrap, PairingMakesConsistentSmallGainsSignificant) {
  // B is right where A is, plus nowhere else; A has 8 more right answers out of 400. Unpaired,
  // 70 % against 68 % is noise; paired, A never loses an example B wins.
  std::vector<int> a(400), b(400);
  for (int i = 0; i < 400; ++i) a[i] = i < 280, b[i] = i < 272;
  EXPECT_LT(test_accuracy(a, b).p_value, 0.01);
}

TEST(PairedBootstrap, TieGivesPValueOne) {
  const std::vector<int> a = {1, 0, 1, 1, 0};
  EXPECT_DOUBLE_EQ(test_accuracy(a, a).p_value, 1.0);
}

TEST(PairedBootstrap, SameSeedSameResult) {
  std::vector<int> a(60), b(60);
  for (int i = 0; i < 60; ++i) a[i] = i % 3 != 0, b[i] = i % 2;
  EXPECT_DOUBLE_EQ(test_accuracy(a, b, 3).p_value, test_accuracy(a, b, 3).p_value);
}

TEST(PairedBootstrap, RefusesNoExamples) {
  EXPECT_THROW(test_accuracy({}, {}), Error);
}

}  // namespace
}  // namespace strata
