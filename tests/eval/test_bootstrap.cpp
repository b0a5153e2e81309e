// Bootstrap aggregation as rouge-score's BootstrapAggregator defines it.
#include <gtest/gtest.h>

#include <vector>

#include "strata/core/error.h"
#include "strata/eval/bootstrap.h"

namespace strata {
namespace {

TEST(QuantileLinear, InterpolatesLikeNumpyPercentile) {
  const std::vector<double> v{1, 2, 4, 8};
  // numpy.percentile([1, 2, 4, 8], [0, 2.5, 50, 97.5, 100]) = [1, 1.075, 3, 7.7, 8]
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.025), 1.075);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 0.975), 7.7);
  EXPECT_DOUBLE_EQ(quantile_linear(v, 1.0), 8);
  EXPECT_DOUBLE_EQ(quantile_linear(std::vector<double>{5}, 0.3), 5);
}

TEST(Bootstrap, ConstantScoresGiveAPointInterval) {
  const std::vector<RougeScore> scores(50, RougeScore{0.5, 0.25, 1.0 / 3});
  const RougeAggregate a = bootstrap_aggregate(scores);
  for (const auto& [e, value] :
       {std::pair{a.precision, 0.5}, std::pair{a.recall, 0.25}, std::pair{a.fmeasure, 1.0 / 3}}) {
    EXPECT_NEAR(e.mean, value, 1e-15);
    EXPECT_NEAR(e.low, value, 1e-15);
    EXPECT_NEAR(e.mid, value, 1e-15);
    EXPECT_NEAR(e.high, value, 1e-15);
  }
}

TEST(Bootstrap, IntervalBracketsTheMeanAndIsSeeded) {
  std::vector<RougeScore> scores;
  for (int i = 0; i < 200; ++i) scores.push_back({i % 2 ? 1.0 : 0.0, i / 199.0, 0.5});
  const RougeAggregate a = bootstrap_aggregate(scores);
  EXPECT_DOUBLE_EQ(a.precision.mean, 0.5);
  EXPECT_DOUBLE_EQ(a.recall.mean, 0.5);
  // The mean of 200 coin flips has standard error 0.5 / sqrt(200) = 0.035: the 95% interval
  // is about +-0.07 wide on each side; these bounds hold for any reasonable draw.
  EXPECT_GT(a.precision.low, 0.38);
  EXPECT_LT(a.precision.low, 0.47);
  EXPECT_GT(a.precision.high, 0.53);
  EXPECT_LT(a.precision.high, 0.62);
  EXPECT_NEAR(a.precision.mid, 0.5, 0.02);
  EXPECT_LE(a.recall.low, a.recall.mid);
  EXPECT_LE(a.recall.mid, a.recall.high);
  EXPECT_DOUBLE_EQ(a.fmeasure.low, 0.5);

  const RougeAggregate again = bootstrap_aggregate(scores);
  EXPECT_EQ(again.precision.low, a.precision.low);
  EXPECT_EQ(again.recall.high, a.recall.high);
  const RougeAggregate other = bootstrap_aggregate(scores, {1000, 0.95, 7});
  EXPECT_NE(other.recall.low, a.recall.low);
}

TEST(Bootstrap, ConfidenceSetsTheQuantiles) {
  std::vector<RougeScore> scores;
  for (int i = 0; i < 100; ++i) scores.push_back({i / 99.0, 0, 0});
  // Confidence 0: low, mid and high are all the median of the resample means.
  const RougeAggregate a = bootstrap_aggregate(scores, {500, 0.0, 3});
  EXPECT_EQ(a.precision.low, a.precision.mid);
  EXPECT_EQ(a.precision.high, a.precision.mid);
}

TEST(Bootstrap, RejectsBadInput) {
  EXPECT_THROW(bootstrap_aggregate(std::vector<RougeScore>{}), Error);
  const std::vector<RougeScore> one{RougeScore{1, 1, 1}};
  EXPECT_THROW(bootstrap_aggregate(one, {0, 0.95, 1}), Error);
  EXPECT_THROW(bootstrap_aggregate(one, {10, 1.5, 1}), Error);
}

}  // namespace
}  // namespace strata
