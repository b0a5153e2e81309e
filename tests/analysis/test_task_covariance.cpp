#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/analysis/task_covariance.h"
#include "strata/core/error.h"

namespace strata::analysis {
namespace {

// m rows, each `scale` times one of the unit vectors `directions` of R^4, in turn.
at::Tensor rows_along(std::initializer_list<std::int64_t> directions, double scale, std::int64_t m) {
  at::Tensor x = torch::zeros({m, 4}, torch::kFloat64);
  std::vector<std::int64_t> dirs(directions);
  for (std::int64_t r = 0; r < m; ++r) x[r][dirs[static_cast<std::size_t>(r) % dirs.size()]] = scale;
  return x;
}

TEST(CovarianceSimilarity, MatchesTheHandComputedValues) {
  // Task 0 along e1 only: A_0 = [√λ e1]. Task 1 along e1 and e2 equally: A_1 = [√μ e1, √μ e2].
  // CovSim_01 = √(λμ) / (√λ · √(2μ)) = 1/√2. Task 2 along e3: orthogonal to both, 0.
  const CovarianceSimilarity s = covariance_similarity(
      {rows_along({0}, 2.0, 6), rows_along({0, 1}, 1.0, 8), rows_along({2}, 3.0, 5)});
  EXPECT_NEAR(s.pairs[0][1], 1 / std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(s.pairs[0][2], 0.0, 1e-9);
  EXPECT_NEAR(s.pairs[1][2], 0.0, 1e-9);
  EXPECT_NEAR(s.per_task[0], (1 / std::sqrt(2.0)) / 2, 1e-9);
  EXPECT_EQ(s.ranks, (std::vector<std::int64_t>{1, 2, 1}));
  EXPECT_NEAR(s.mean, (s.per_task[0] + s.per_task[1] + s.per_task[2]) / 3, 1e-12);
}

TEST(CovarianceSimilarity, IsOneForTheSameRankOneInputsAndKeepsNinetyNinePercent) {
  const CovarianceSimilarity same = covariance_similarity({rows_along({3}, 1.0, 4), rows_along({3}, 5.0, 7)});
  EXPECT_NEAR(same.pairs[0][1], 1.0, 1e-9);
  // A direction carrying under 1 % of the spectrum is dropped: 100 rows along e1, one tiny
  // row along e2 keep rank 1.
  at::Tensor x = rows_along({0}, 1.0, 100);
  x[0][0] = 0;
  x[0][1] = 0.5;
  EXPECT_EQ(covariance_similarity({x, rows_along({0}, 1.0, 3)}).ranks[0], 1);
}

TEST(CovarianceSimilarity, RejectsOneTaskAndMismatchedWidths) {
  EXPECT_THROW(covariance_similarity({rows_along({0}, 1.0, 3)}), Error);
  EXPECT_THROW(covariance_similarity({rows_along({0}, 1.0, 3), torch::ones({3, 5}, torch::kFloat64)}), Error);
}

}  // namespace
}  // namespace strata::analysis
