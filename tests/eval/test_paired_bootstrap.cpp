// Paired bootstrap: a clear winner gets a small p-value and an interval of A - B away from 0,
// a coin-flip difference a large p and an interval across 0, a tie p = 1; draws repeat for a
// seed.
#include <gtest/gtest.h>

#include <vector>

#include "strata/core/error.h"
#include "strata/eval/paired_bootstrap.h"

namespace strata {
namespace {

// Accuracy of two systems over per-example 0/1 correctness.
PairedBootstrap test_accuracy(const std::vector<int>& a, const std::vector<int>& b, std::uint64_t seed = 7,
                              double confidence = 0.95) {
  PairedBootstrapOptions options;
  options.seed = seed;
  options.confidence = confidence;
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
  // A - B = 0.4; each resample's difference is a mean of 200 draws of a per-example difference
  // whose standard deviation is about 0.58, so the 95 % interval is about 0.4 +- 0.08.
  EXPECT_GT(result.difference_low, 0.3);
  EXPECT_LT(result.difference_low, 0.4);
  EXPECT_GT(result.difference_high, 0.4);
  EXPECT_LT(result.difference_high, 0.5);
  // The direction does not matter: B against A is the same test, its interval mirrored.
  const PairedBootstrap reverse = test_accuracy(b, a);
  EXPECT_LT(reverse.p_value, 0.01);
  EXPECT_NEAR(reverse.difference_low, -result.difference_high, 1e-12);
  EXPECT_NEAR(reverse.difference_high, -result.difference_low, 1e-12);
  // A wider confidence gives a wider interval around the same resamples.
  const PairedBootstrap wide = test_accuracy(a, b, 7, 0.99);
  EXPECT_LT(wide.difference_low, result.difference_low);
  EXPECT_GT(wide.difference_high, result.difference_high);
}

TEST(PairedBootstrap, SmallDifferenceIsNotSignificant) {
  std::vector<int> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[i] = i < 51, b[i] = i >= 50;  // 51 % against 50 %, disagreeing often
  const PairedBootstrap result = test_accuracy(a, b);
  EXPECT_GT(result.p_value, 0.2);
  EXPECT_LT(result.difference_low, 0.0);
  EXPECT_GT(result.difference_high, 0.0);
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
  const PairedBootstrap tie = test_accuracy(a, a);
  EXPECT_DOUBLE_EQ(tie.p_value, 1.0);
  EXPECT_DOUBLE_EQ(tie.difference_low, 0.0);
  EXPECT_DOUBLE_EQ(tie.difference_high, 0.0);
}

TEST(PairedBootstrap, SameSeedSameResult) {
  std::vector<int> a(60), b(60);
  for (int i = 0; i < 60; ++i) a[i] = i % 3 != 0, b[i] = i % 2;
  EXPECT_DOUBLE_EQ(test_accuracy(a, b, 3).p_value, test_accuracy(a, b, 3).p_value);
}

TEST(PairedBootstrap, RefusesNoExamplesAndConfidenceOutsideZeroToOne) {
  EXPECT_THROW(test_accuracy({}, {}), Error);
  EXPECT_THROW(test_accuracy({1, 0}, {0, 1}, 7, 1.5), Error);
  EXPECT_THROW(test_accuracy({1, 0}, {0, 1}, 7, -0.1), Error);
}

}  // namespace
}  // namespace strata
