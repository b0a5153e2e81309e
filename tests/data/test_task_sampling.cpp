// Task sampling of CA-MTL: task probabilities, per-task pools without replacement, and the
// MT-Uncertainty selection of Algorithm 1 against scores computed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/data/task_sampling.h"

namespace strata {
namespace {

std::string error_message(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TaskSamplingNames, RoundTripAndUnknownNamesListTheKnownOnes) {
  for (TaskSampler sampler : {TaskSampler::Uniform, TaskSampler::SizeProportional, TaskSampler::Temperature,
                              TaskSampler::MtUncertainty, TaskSampler::MtUncertaintyWeighted})
    EXPECT_EQ(task_sampler_from_name(task_sampler_name(sampler)), sampler);
  EXPECT_EQ(task_sampler_from_name("size"), TaskSampler::SizeProportional);
  EXPECT_EQ(task_sampler_name(TaskSampler::MtUncertaintyWeighted), "mt-uncertainty-weighted");
  const std::string message = error_message([] { task_sampler_from_name("random"); });
  EXPECT_NE(message.find("'random'"), std::string::npos) << message;
  EXPECT_NE(message.find("uniform, size, temperature, mt-uncertainty, mt-uncertainty-weighted"),
            std::string::npos) << message;
}

TEST(TaskSamplingProbabilities, ByHandForSizes100_10_1) {
  const std::vector<std::size_t> sizes{100, 10, 1};
  const std::vector<double> uniform = task_probabilities(TaskSampler::Uniform, sizes, 0.5);
  for (double p : uniform) EXPECT_DOUBLE_EQ(p, 1.0 / 3);
  const std::vector<double> size = task_probabilities(TaskSampler::SizeProportional, sizes, 0.5);
  EXPECT_DOUBLE_EQ(size[0], 100.0 / 111);
  EXPECT_DOUBLE_EQ(size[1], 10.0 / 111);
  EXPECT_DOUBLE_EQ(size[2], 1.0 / 111);
  // α = 0.5: weights sqrt(100) = 10, sqrt(10) = 3.1623, 1; sum 14.1623.
  const std::vector<double> tempered = task_probabilities(TaskSampler::Temperature, sizes, 0.5);
  const double total = 11 + std::sqrt(10.0);
  EXPECT_NEAR(tempered[0], 10 / total, 1e-15);  // 0.7061
  EXPECT_NEAR(tempered[1], std::sqrt(10.0) / total, 1e-15);  // 0.2233
  EXPECT_NEAR(tempered[2], 1 / total, 1e-15);  // 0.0706
  const std::vector<double> alpha_one = task_probabilities(TaskSampler::Temperature, sizes, 1.0);
  const std::vector<double> alpha_zero = task_probabilities(TaskSampler::Temperature, sizes, 0.0);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_NEAR(alpha_one[i], size[i], 1e-15);
    EXPECT_NEAR(alpha_zero[i], uniform[i], 1e-15);
  }
}

TEST(TaskSamplingProbabilities, RejectsWhatDoesNotDrawTasks) {
  const std::vector<std::size_t> sizes{100, 10, 1};
  EXPECT_THROW(task_probabilities(TaskSampler::MtUncertainty, sizes, 0.5), Error);
  EXPECT_THROW(task_probabilities(TaskSampler::MtUncertaintyWeighted, sizes, 0.5), Error);
  EXPECT_THROW(task_probabilities(TaskSampler::Uniform, std::vector<std::size_t>{}, 0.5), Error);
  EXPECT_THROW(task_probabilities(TaskSampler::SizeProportional, std::vector<std::size_t>{0, 0}, 0.5), Error);
  EXPECT_THROW(task_probabilities(TaskSampler::Temperature, sizes, -1), Error);
}

TEST(TaskPools, EveryIndexOnceBeforeAnyRepeats) {
  TaskPools pools(std::vector<std::size_t>{7, 3}, 12);
  std::vector<std::size_t> first;
  for (int i = 0; i < 3; ++i)
    for (std::size_t index : pools.draw(0, 2)) first.push_back(index);
  for (std::size_t index : pools.draw(0, 1)) first.push_back(index);
  EXPECT_EQ(pools.reloads(0), 0u);
  std::vector<std::size_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_NE(first, sorted);  // shuffled (one chance in 5040 of the identity)

  // The next draw finds the pool empty: a reload, a fresh permutation of all 7.
  const std::vector<std::size_t> second = pools.draw(0, 7);
  EXPECT_EQ(pools.reloads(0), 1u);
  sorted = second;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_NE(second, first);
  EXPECT_EQ(pools.reloads(1), 0u);  // task 1 untouched
}

TEST(TaskPools, ADrawCrossesTheReloadBoundary) {
  TaskPools pools(std::vector<std::size_t>{3}, 5);
  const std::vector<std::size_t> head = pools.draw(0, 2);
  const std::vector<std::size_t> across = pools.draw(0, 2);  // the last of pass 0, the first of pass 1
  EXPECT_EQ(pools.reloads(0), 1u);
  std::vector<std::size_t> pass{head[0], head[1], across[0]};
  std::sort(pass.begin(), pass.end());
  EXPECT_EQ(pass, (std::vector<std::size_t>{0, 1, 2}));
  // Count > size: 3 + 3 + 1 across two more reloads, every index at least twice.
  const std::vector<std::size_t> many = pools.draw(0, 7);
  EXPECT_EQ(pools.reloads(0), 3u);
  for (std::size_t index = 0; index < 3; ++index)
    EXPECT_GE(std::count(many.begin(), many.end(), index), 2) << index;
  EXPECT_THROW(pools.draw(1, 1), Error);
  EXPECT_THROW(TaskPools(std::vector<std::size_t>{4, 0}, 1), Error);
}

TEST(TaskPools, DrawsDependOnSeedTaskAndReloadOnly) {
  TaskPools a(std::vector<std::size_t>{50, 50}, 9), b(std::vector<std::size_t>{50, 50}, 9);
  b.draw(1, 120);  // another task's draws do not disturb task 0's
  EXPECT_EQ(a.draw(0, 80), b.draw(0, 80));
  TaskPools c(std::vector<std::size_t>{50, 50}, 10);
  EXPECT_NE(TaskPools(std::vector<std::size_t>{50, 50}, 9).draw(0, 50), c.draw(0, 50));
}

TEST(TaskPools, StateRoundTripContinuesIdentically) {
  const std::vector<std::size_t> sizes{5, 8, 2};
  TaskPools uninterrupted(sizes, 3);
  uninterrupted.draw(0, 7);
  uninterrupted.draw(1, 8);
  uninterrupted.draw(2, 1);
  const std::string saved = uninterrupted.state().dump();

  TaskPools resumed(sizes, 3);
  resumed.restore(nlohmann::json::parse(saved));
  EXPECT_EQ(resumed.state(), uninterrupted.state());
  EXPECT_EQ(resumed.reloads(0), 1u);
  for (std::size_t task = 0; task < sizes.size(); ++task)
    EXPECT_EQ(resumed.draw(task, 11), uninterrupted.draw(task, 11)) << task;
}

TEST(TaskPools, RestoreRejectsAnotherShapeAndNamesTheField) {
  TaskPools pools(std::vector<std::size_t>{5, 8}, 3);
  const nlohmann::json good = pools.state();
  EXPECT_THROW(TaskPools(std::vector<std::size_t>{5, 8, 2}, 3).restore(good), Error);
  EXPECT_THROW(TaskPools(std::vector<std::size_t>{5}, 3).restore(good), Error);
  EXPECT_THROW(TaskPools(std::vector<std::size_t>{5, 9}, 3).restore(good), Error);

  nlohmann::json bad = good;
  bad["tasks"][1]["position"] = -1;
  EXPECT_NE(error_message([&] { pools.restore(bad); }).find("'tasks[1].position'"), std::string::npos);
  bad = good;
  bad["tasks"][0]["position"] = 6;
  EXPECT_NE(error_message([&] { pools.restore(bad); }).find("'tasks[0].position'"), std::string::npos);
  bad = good;
  bad["tasks"][0].erase("reloads");
  EXPECT_NE(error_message([&] { pools.restore(bad); }).find("'tasks[0].reloads'"), std::string::npos);
  EXPECT_NE(error_message([&] { pools.restore(nlohmann::json::object()); }).find("'tasks'"), std::string::npos);
  EXPECT_EQ(pools.state(), good);  // a failed restore leaves the pools as they were
}

// Algorithm 1 with b = 2 on three tasks, two candidates each:
//   task 0 (C = 2): H = 0.6, 0.2;  task 1 (C = 3): H = 1.0, 0.3;  task 2 (regression): H = 0, 0.
// Task means 0.4, 0.65, 0: Ĥ = 0.65.
const std::vector<Candidate> kThreeTasks{{0, 0.6, 2}, {0, 0.2, 2}, {1, 1.0, 3},
                                         {1, 0.3, 3}, {2, 0.0, 1}, {2, 0.0, 1}};

TEST(MtUncertainty, PaperScoresAndTopBByHand) {
  const std::vector<double> scores = uncertainty_scores(kThreeTasks, false);
  const double h_hat = 0.65;
  EXPECT_NEAR(scores[0], 0.6 / (h_hat * std::log(2.0)), 1e-15);  // 1.3317
  EXPECT_NEAR(scores[1], 0.2 / (h_hat * std::log(2.0)), 1e-15);  // 0.4439
  EXPECT_NEAR(scores[2], 1.0 / (h_hat * std::log(3.0)), 1e-15);  // 1.4004
  EXPECT_NEAR(scores[3], 0.3 / (h_hat * std::log(3.0)), 1e-15);  // 0.4201
  EXPECT_EQ(scores[4], 0.0);
  EXPECT_EQ(scores[5], 0.0);
  EXPECT_EQ(select_uncertain(kThreeTasks, 2, false), (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(select_uncertain(kThreeTasks, 4, false), (std::vector<std::size_t>{2, 0, 1, 3}));
  // Regression ties at 0 keep the lower position first.
  EXPECT_EQ(select_uncertain(kThreeTasks, 6, false), (std::vector<std::size_t>{2, 0, 1, 3, 4, 5}));
}

TEST(MtUncertainty, HHatScalesEveryScoreAlikeSoTheRankingIsHByLogC) {
  const std::vector<double> scores = uncertainty_scores(kThreeTasks, false);
  std::vector<double> unscaled;
  for (const Candidate& c : kThreeTasks)
    unscaled.push_back(c.classes == 1 ? 0.0 : c.entropy / std::log(static_cast<double>(c.classes)));
  for (std::size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(scores[i] * 0.65, unscaled[i], 1e-15);
  // Raising Ĥ (a third candidate for task 1 pushes its mean to 0.9) rescales, never reorders.
  std::vector<Candidate> more = kThreeTasks;
  more.push_back({1, 1.4, 3});
  const std::vector<double> rescaled = uncertainty_scores(more, false);
  for (std::size_t i = 0; i < scores.size(); ++i) EXPECT_NEAR(rescaled[i] * 0.9, scores[i] * 0.65, 1e-15);
  EXPECT_EQ(select_uncertain(more, 4, false), (std::vector<std::size_t>{6, 2, 0, 1}));
}

TEST(MtUncertainty, CodeVariantWeighsByTaskAndPicksAnotherSet) {
  // Task 0: one confident and one nearly uniform candidate; task 1: two fairly uncertain ones.
  const std::vector<Candidate> candidates{{0, 0.69, 2}, {0, 0.0, 2}, {1, 0.6, 2}, {1, 0.6, 2}};
  // Paper: H / log 2 ranks 0.69 first, then the first 0.6.
  EXPECT_EQ(select_uncertain(candidates, 2, false), (std::vector<std::size_t>{0, 2}));
  // Code: u = H / (log 2 + 1e-5): 0.99545, 0, 0.86561, 0.86561; ū_0 = 0.49773, ū_1 = 0.86561.
  // Scores: 0.99545 · 0.49773 / 0.86561 = 0.57238, 0, 0.86561, 0.86561.
  const double log_c = std::log(2.0) + 1e-5;
  const double u0 = 0.69 / log_c, u1 = 0.6 / log_c;
  const std::vector<double> scores = uncertainty_scores(candidates, true);
  EXPECT_NEAR(scores[0], u0 * (u0 / 2) / u1, 1e-15);
  EXPECT_NEAR(scores[0], 0.57238, 1e-5);
  EXPECT_EQ(scores[1], 0.0);
  EXPECT_NEAR(scores[2], u1, 1e-15);
  EXPECT_NEAR(scores[3], u1, 1e-15);
  EXPECT_EQ(select_uncertain(candidates, 2, true), (std::vector<std::size_t>{2, 3}));
}

TEST(MtUncertainty, RegressionCandidatesScoreZeroNotNaN) {
  for (bool weighted : {false, true}) {
    for (double score : uncertainty_scores(kThreeTasks, weighted)) EXPECT_TRUE(std::isfinite(score));
    const std::vector<Candidate> regression_only{{0, 0.0, 1}, {1, 0.0, 1}};
    for (double score : uncertainty_scores(regression_only, weighted)) EXPECT_EQ(score, 0.0);
    EXPECT_EQ(select_uncertain(regression_only, 1, weighted), (std::vector<std::size_t>{0}));
  }
  const std::vector<double> weighted = uncertainty_scores(kThreeTasks, true);
  EXPECT_EQ(weighted[4], 0.0);
  EXPECT_EQ(weighted[5], 0.0);
}

TEST(MtUncertainty, RejectsBadEntropiesAndTooLargeB) {
  EXPECT_THROW(select_uncertain(kThreeTasks, 7, false), Error);
  EXPECT_TRUE(select_uncertain(kThreeTasks, 0, true).empty());
  EXPECT_THROW(uncertainty_scores(std::vector<Candidate>{{0, -0.1, 2}}, false), Error);
  EXPECT_THROW(uncertainty_scores(std::vector<Candidate>{{0, std::nan(""), 2}}, true), Error);
  EXPECT_THROW(uncertainty_scores(std::vector<Candidate>{{0, 0.5, 0}}, false), Error);
}

}  // namespace
}  // namespace strata
