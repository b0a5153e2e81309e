#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/core/error.h"
#include "strata/data/token_batches.h"

namespace strata {
namespace {

std::vector<std::size_t> varied_lengths(std::size_t n) {
  std::vector<std::size_t> lengths;
  std::uint32_t state = 7;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    lengths.push_back(1 + (state >> 8) % 300);
  }
  return lengths;
}

void expect_each_index_once(const BatchPlan& plan, std::size_t n) {
  std::vector<std::size_t> seen;
  for (const auto& batch : plan) {
    EXPECT_FALSE(batch.empty());
    seen.insert(seen.end(), batch.begin(), batch.end());
  }
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], i);
}

std::size_t longest(const std::vector<std::size_t>& batch, const std::vector<std::size_t>& lengths) {
  std::size_t m = 0;
  for (std::size_t i : batch) m = std::max(m, lengths[i]);
  return m;
}

TEST(PlanBatches, CoversEveryIndexOnceWithinTheBudget) {
  const std::vector<std::size_t> lengths = varied_lengths(1000);
  BatchPlanOptions options;
  options.max_tokens = 1024;
  for (bool shuffle : {true, false}) {
    options.shuffle = shuffle;
    const BatchPlan plan = plan_batches(lengths, options, 3);
    expect_each_index_once(plan, lengths.size());
    for (const auto& batch : plan) EXPECT_LE(batch.size() * longest(batch, lengths), 1024u);
  }
}

TEST(PlanBatches, SortedBatchesAreFullSoPaddingIsSmall) {
  const std::vector<std::size_t> lengths = varied_lengths(1000);
  BatchPlanOptions options;
  options.max_tokens = 2048;
  const BatchPlan plan = plan_batches(lengths, options, 0);
  std::size_t real = 0, padded = 0;
  for (const auto& batch : plan) {
    for (std::size_t i : batch) real += lengths[i];
    padded += batch.size() * longest(batch, lengths);
  }
  EXPECT_GT(static_cast<double>(real) / padded, 0.9);
}

TEST(PlanBatches, RespectsMaxRows) {
  const std::vector<std::size_t> lengths(100, 1);
  BatchPlanOptions options;
  options.max_tokens = 1000;
  options.max_rows = 8;
  const BatchPlan plan = plan_batches(lengths, options, 0);
  ASSERT_EQ(plan.size(), 13u);  // 12 × 8 + 4
  for (const auto& batch : plan) EXPECT_LE(batch.size(), 8u);
  expect_each_index_once(plan, 100);
}

TEST(PlanBatches, AnExampleOverTheBudgetIsABatchOfItsOwn) {
  const std::vector<std::size_t> lengths{10, 500, 10, 900, 10};
  BatchPlanOptions options;
  options.max_tokens = 100;
  options.shuffle = false;
  const BatchPlan plan = plan_batches(lengths, options, 0);
  EXPECT_EQ(plan, (BatchPlan{{0, 2, 4}, {1}, {3}}));
}

TEST(PlanBatches, WithoutShuffleBatchesRunShortToLongAndTiesKeepIndexOrder) {
  const std::vector<std::size_t> lengths{5, 3, 5, 0, 3, 4};
  BatchPlanOptions options;
  options.max_tokens = 10;
  options.shuffle = false;
  // Length 0 costs 1. Sorted: 3(0) 1(3) 4(3) 5(4) 0(5) 2(5).
  EXPECT_EQ(plan_batches(lengths, options, 0), (BatchPlan{{3, 1, 4}, {5, 0}, {2}}));
  options.seed = 99;  // the seed and the epoch change nothing without shuffle
  EXPECT_EQ(plan_batches(lengths, options, 5), (BatchPlan{{3, 1, 4}, {5, 0}, {2}}));
}

TEST(PlanBatches, IsReproducibleAndVariesWithEpochAndSeed) {
  const std::vector<std::size_t> lengths = varied_lengths(500);
  BatchPlanOptions options;
  options.max_tokens = 512;
  const BatchPlan plan = plan_batches(lengths, options, 1);
  EXPECT_EQ(plan, plan_batches(lengths, options, 1));
  EXPECT_NE(plan, plan_batches(lengths, options, 2));
  options.seed = 2;
  EXPECT_NE(plan, plan_batches(lengths, options, 1));
}

TEST(PlanBatches, ShuffleMixesExamplesOfEqualLengthAcrossEpochs) {
  const std::vector<std::size_t> lengths(64, 10);
  BatchPlanOptions options;
  options.max_tokens = 40;  // 4 rows
  BatchPlan first = plan_batches(lengths, options, 0), second = plan_batches(lengths, options, 1);
  for (BatchPlan* plan : {&first, &second})
    for (auto& batch : *plan) std::sort(batch.begin(), batch.end());
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_NE(first, second);  // not just the same batches in another order
}

// A fixed plan: the generator is ours, so the plan is the same with every standard library.
TEST(PlanBatches, PlanIsStableAcrossBuilds) {
  const std::vector<std::size_t> lengths{4, 4, 4, 4, 2, 2, 9, 1};
  BatchPlanOptions options;
  options.max_tokens = 8;
  options.seed = 42;
  EXPECT_EQ(plan_batches(lengths, options, 0), (BatchPlan{{7, 4, 5}, {3, 1}, {6}, {0, 2}}));
}

TEST(PlanBatches, EmptyInputGivesAnEmptyPlanAndZeroBudgetIsAnError) {
  BatchPlanOptions options;
  EXPECT_TRUE(plan_batches({}, options, 0).empty());
  options.max_tokens = 0;
  const std::vector<std::size_t> lengths{1};
  EXPECT_THROW(plan_batches(lengths, options, 0), Error);
  EXPECT_THROW(plan_batches_in_order(lengths, 0), Error);
}

TEST(PlanBatchesInOrder, KeepsOriginalOrderInConsecutiveRuns) {
  const std::vector<std::size_t> lengths{2, 8, 2, 2, 3, 20, 1};
  EXPECT_EQ(plan_batches_in_order(lengths, 16), (BatchPlan{{0, 1}, {2, 3, 4}, {5}, {6}}));
  EXPECT_EQ(plan_batches_in_order(lengths, 16, 2), (BatchPlan{{0, 1}, {2, 3}, {4}, {5}, {6}}));
}

}  // namespace
}  // namespace strata
