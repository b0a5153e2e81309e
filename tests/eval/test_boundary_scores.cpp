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

TEST(TuneThreshold, PicksTheCutWithTheBestF1OnTheRankedCandidates) {
  // Ranked: 0.9 (1), 0.8 (0), 0.7 (1), 0.6 (1), 0.3 (0), 0.2 (1). F1 at each cut, 2c/(p+g), g = 4:
  // 0.9: 2/5; 0.8: 2/6; 0.7: 4/7; 0.6: 6/8; 0.3: 6/9; 0.2: 8/10. Best: 0.2 with 0.8.
  const std::vector<float> p{0.3f, 0.9f, 0.6f, 0.2f, 0.8f, 0.7f};
  const std::vector<int> gold{0, 1, 1, 1, 0, 1};
  TunedThreshold t = tune_threshold(p, gold);
  EXPECT_FLOAT_EQ(t.threshold, 0.2f);
  EXPECT_NEAR(t.scores.f1, 0.8, 1e-12);
  EXPECT_EQ(t.scores.predicted, 6u);
  // Non-boundaries at the bottom (g = 3): the cut at 0.6 (F1 6/7) wins over predicting
  // everything (6/10).
  const std::vector<float> p2{0.3f, 0.9f, 0.6f, 0.05f, 0.8f, 0.7f, 0.01f};
  const std::vector<int> gold2{0, 1, 1, 0, 0, 1, 0};
  t = tune_threshold(p2, gold2);
  EXPECT_FLOAT_EQ(t.threshold, 0.6f);
  EXPECT_EQ(t.scores.predicted, 4u);
  EXPECT_EQ(t.scores.correct, 3u);
  EXPECT_EQ(boundaries_at(p2, t.threshold), (std::vector<int>{0, 1, 1, 0, 1, 1, 0}));
}

TEST(TuneThreshold, TiedProbabilitiesAreOneCutAndTiesInF1KeepTheHigherThreshold) {
  // g = 2. The two 0.5s are one cut (3 predicted, 2 correct): F1 4/5, beating 0.9 (2/3) and
  // 0.1 (4/6).
  const std::vector<float> p{0.9f, 0.5f, 0.5f, 0.1f};
  const std::vector<int> gold{1, 1, 0, 0};
  const TunedThreshold t = tune_threshold(p, gold);
  EXPECT_FLOAT_EQ(t.threshold, 0.5f);
  EXPECT_NEAR(t.scores.f1, 0.8, 1e-12);
  // F1 2/3 at 0.9 and again at 0.6 (4/6): the higher threshold stays.
  const std::vector<float> q{0.9f, 0.8f, 0.7f, 0.6f};
  const std::vector<int> ends{1, 0, 0, 1};
  EXPECT_FLOAT_EQ(tune_threshold(q, ends).threshold, 0.9f);
}

TEST(TuneThreshold, RefusesEmptyOrMismatchedInput) {
  const std::vector<float> p{0.5f};
  const std::vector<int> none, two{0, 1};
  EXPECT_THROW(tune_threshold(std::span<const float>(), none), Error);
  EXPECT_THROW(tune_threshold(p, two), Error);
}

}  // namespace
}  // namespace strata
