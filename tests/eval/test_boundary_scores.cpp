#include <gtest/gtest.h>

#include <vector>

#include "strata/core/error.h"
#include "strata/eval/boundary_scores.h"

namespace strata {
namespace {

TEST(BoundaryScores, PrecisionRecallAndF1OfTheBoundaryClass) {
  const std::vector<int> predicted{1, 1, 0, 1, 0, 0};
  const std::vector<int> gold{1, 0, 1, 1, 0, 1};
  const BoundaryScores s = boundary_scores(predicted, gold);
  EXPECT_EQ(s.predicted, 3u);
  EXPECT_EQ(s.gold, 4u);
  EXPECT_EQ(s.correct, 2u);
  EXPECT_DOUBLE_EQ(s.precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.f1, 2 * (2.0 / 3.0) * 0.5 / (2.0 / 3.0 + 0.5));  // 4/7
}

TEST(BoundaryScores, UndefinedRatiosAreZero) {
  const std::vector<int> none{0, 0, 0}, some{0, 1, 0};
  const BoundaryScores nothing_predicted = boundary_scores(none, some);
  EXPECT_EQ(nothing_predicted.precision, 0.0);
  EXPECT_EQ(nothing_predicted.recall, 0.0);
  EXPECT_EQ(nothing_predicted.f1, 0.0);
  const BoundaryScores no_gold = boundary_scores(some, none);
  EXPECT_EQ(no_gold.precision, 0.0);
  EXPECT_EQ(no_gold.recall, 0.0);
  EXPECT_EQ(no_gold.f1, 0.0);
  const BoundaryScores empty = boundary_scores({}, {});
  EXPECT_EQ(empty.f1, 0.0);
  const BoundaryScores perfect = boundary_scores(some, some);
  EXPECT_EQ(perfect.f1, 1.0);
}

TEST(BoundaryScores, MismatchedLengthsAndOtherValuesAreErrors) {
  const std::vector<int> two{0, 1}, three{0, 1, 1}, bad{0, 2};
  EXPECT_THROW(boundary_scores(two, three), Error);
  EXPECT_THROW(boundary_scores(bad, two), Error);
  EXPECT_THROW(boundary_scores(two, bad), Error);
}

}  // namespace
}  // namespace strata
