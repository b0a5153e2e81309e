#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <random>
#include <set>

#include "decode/toy_models.h"
#include "strata/decode/generate.h"

namespace strata::decode {
namespace {

using test_support::kEos;
using test_support::kPad;
using test_support::PrefixModel;
using test_support::random_weights;
using test_support::table_weights;
using Table = std::vector<std::vector<double>>;

Sequences run_greedy(const test_support::NextWeights& weights, const std::vector<std::int64_t>& inputs,
              const GenerationOptions& options) {
  PrefixModel model(inputs, weights);
  return generate(model, options);
}

TEST(Greedy, FollowsTheArgmaxPathOfATable) {
  // Tokens: 0 start, 1 eos, 2 pad, 3..5 words. Rows 1 and 2 are never read.
  const Table table{{0, .1, 0, .5, .3, .1},  {1, 1, 1, 1, 1, 1},     {1, 1, 1, 1, 1, 1},
                    {0, .1, 0, .1, .6, .2},  {0, .1, 0, .1, .1, .7}, {0, .8, 0, .1, .05, .05}};
  EXPECT_EQ(run_greedy(table_weights(table), {0}, {}), (Sequences{{3, 4, 5, kEos}}));
}

TEST(Greedy, EqualsTheArgmaxWalkOnARandomTable) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Table table(10, std::vector<double>(10));
  for (auto& row : table)
    for (double& w : row) w = uniform(rng);
  for (auto& row : table) row[kEos] *= 0.5;
  std::vector<std::int64_t> expected;
  std::int64_t last = 0;
  while (expected.size() < 12 && last != kEos) {
    last = std::max_element(table[last].begin(), table[last].end()) - table[last].begin();
    expected.push_back(last);
  }
  GenerationOptions options;
  options.max_length = 12;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), Sequences{expected});
}

TEST(Greedy, StopsAtMaxLengthWithoutEos) {
  GenerationOptions options;
  options.max_length = 5;
  const Sequences out = run_greedy(random_weights(6, 3, 0.0), {0, 1}, options);
  ASSERT_EQ(out.size(), 2u);
  for (const auto& sequence : out) {
    EXPECT_EQ(sequence.size(), 5u);
    EXPECT_EQ(std::count(sequence.begin(), sequence.end(), kEos), 0);
  }
}

TEST(Greedy, MinLengthDelaysEos) {
  // eos is always the favourite; with it banned the walk goes 3 -> 4 -> 3.
  const Table table{{0, .6, 0, .3, .1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1},
                    {0, .6, 0, .1, .3}, {0, .6, 0, .3, .1}};
  GenerationOptions options;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{kEos}}));
  options.min_length = 1;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{3, kEos}}));
  options.min_length = 3;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{3, 4, 3, kEos}}));
}

TEST(Greedy, NoRepeatNgramBreaksALoop) {
  // 3 and 4 prefer each other; 5 and 6 lead to eos.
  const Table table{{0, .01, 0, .7, .1, .1, .09}, {1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1},
                    {0, .05, 0, .05, .6, .2, .1}, {0, .05, 0, .6, .05, .1, .2},
                    {0, .5, 0, .3, .2, 0, 0},     {0, .5, 0, .2, .3, 0, 0}};
  GenerationOptions options;
  options.max_length = 8;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{3, 4, 3, 4, 3, 4, 3, 4}}));
  // n = 2: after 3 4 3, "3 4" again is banned, so 5 (then eos).
  options.no_repeat_ngram_size = 2;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{3, 4, 3, 5, kEos}}));
  // n = 3: after 3 4 3 4, "3 4 3" again is banned, so 6 (then eos).
  options.no_repeat_ngram_size = 3;
  EXPECT_EQ(run_greedy(table_weights(table), {0}, options), (Sequences{{3, 4, 3, 4, 6, kEos}}));
}

TEST(Greedy, NoRepeatNgramHoldsOnRandomModels) {
  GenerationOptions options;
  options.max_length = 30;
  options.no_repeat_ngram_size = 2;
  for (const auto& sequence : run_greedy(random_weights(12, 5, 0.0), {0, 1, 2}, options)) {
    std::set<std::pair<std::int64_t, std::int64_t>> bigrams;
    for (std::size_t i = 0; i + 1 < sequence.size(); ++i)
      EXPECT_TRUE(bigrams.insert({sequence[i], sequence[i + 1]}).second) << "repeat at " << i;
  }
}

TEST(Greedy, BatchedEqualsOneInputAtATimeAndFeedsPadWhenFinished) {
  // Random numbers, except that eos dominates once input i has i + 1 tokens: the inputs finish
  // after 2, 3 and 4 steps.
  const auto random = random_weights(7, 11, 0.0);
  const test_support::NextWeights weights = [&](std::int64_t input, const auto& fed) {
    std::vector<double> w = random(input, fed);
    if (static_cast<std::int64_t>(fed.size()) > input + 1) w[kEos] = 10;
    return w;
  };
  PrefixModel model({0, 1, 2}, weights);
  const Sequences batched = generate(model, {});
  for (std::int64_t input = 0; input < 3; ++input) {
    EXPECT_EQ(batched[input], run_greedy(weights, {input}, {}).at(0)) << "input " << input;
    EXPECT_EQ(batched[input].size(), static_cast<std::size_t>(input + 2));
    // Fed: start, the row's tokens while the batch runs on, then pad.
    const auto& fed = model.row_state()[input].fed;
    ASSERT_EQ(fed.size(), 4u) << "4 steps, the longest row's eos never fed";
    for (std::size_t t = 1; t < fed.size(); ++t)
      EXPECT_EQ(fed[t], t <= batched[input].size() ? batched[input][t - 1] : kPad);
  }
}

}  // namespace
}  // namespace strata::decode
