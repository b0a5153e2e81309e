#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>

#include "decode/toy_models.h"
#include "strata/decode/generate.h"

namespace strata::decode {
namespace {

using test_support::kEos;
using test_support::NextWeights;
using test_support::PrefixModel;
using test_support::random_weights;
using test_support::sequence_log_prob;
using test_support::table_weights;
using Table = std::vector<std::vector<double>>;

Sequences run(const NextWeights& weights, const std::vector<std::int64_t>& inputs,
              const GenerationOptions& options,
              Sequences (*search)(StepModel&, const GenerationOptions&) = beam_search) {
  PrefixModel model(inputs, weights);
  return search(model, options);
}

GenerationOptions beams(std::int64_t k) {
  GenerationOptions options;
  options.beam_size = k;
  return options;
}

// Tokens: 0 start, 1 eos, 2 pad, 3 a, 4 b, 5 c. "a" looks best (0.6) but everything after
// it is mediocre; "b eos" has 0.4 * 0.9 = 0.36.
const Table kTrap{{0, 0, 0, .6, .4, 0},  {0, 1, 0, 1, 1, 1},   {0, 1, 0, 1, 1, 1},
                  {0, .35, 0, 0, .25, .4}, {0, .9, 0, 0, 0, .1}, {0, .55, 0, .45, 0, 0}};

TEST(BeamSearch, EscapesTheGreedyTrap) {
  const auto weights = table_weights(kTrap);
  const Sequences greedy = run(weights, {0}, {}, greedy_search);
  const Sequences beam = run(weights, {0}, beams(2));
  EXPECT_EQ(greedy, (Sequences{{3, 5, kEos}}));  // 0.6 * 0.4 * 0.55 = 0.132
  EXPECT_EQ(beam, (Sequences{{4, kEos}}));
  EXPECT_GT(sequence_log_prob(weights, 0, beam[0]), sequence_log_prob(weights, 0, greedy[0]));
}

TEST(BeamSearch, OneBeamEqualsGreedy) {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    GenerationOptions options = beams(1);
    options.max_length = 12;
    const auto weights = random_weights(9, seed, 1.0);
    EXPECT_EQ(run(weights, {0, 1, 2}, options), run(weights, {0, 1, 2}, options, greedy_search))
        << "seed " << seed;
  }
  EXPECT_EQ(run(table_weights(kTrap), {0}, beams(1)), (Sequences{{3, 5, kEos}}));
}

// Tokens: 0 start, 1 eos, 2 pad, 3 a, 4 b, 5 c, 6 d, 7 e. Two finished hypotheses compete:
// short "a eos" (0.55) and long "b c d eos" (0.45 * 0.9^3 = 0.328); "e" leads nowhere good.
const Table kShortOrLong{{0, 0, 0, .55, .45, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0},
                         {0, 1, 0, 0, 0, 0, 0, 0},     {0, 1, 0, 0, 0, 0, 0, 0},
                         {0, 0, 0, 0, 0, .9, 0, .1},   {0, 0, 0, 0, 0, 0, .9, .1},
                         {0, .9, 0, 0, 0, 0, 0, .1},   {0, 1, 0, 0, 0, 0, 0, 0}};

TEST(BeamSearch, LengthPenaltyChoosesAsTheFormulaSays) {
  const std::vector<std::int64_t> short_one{3, kEos}, long_one{4, 5, 6, kEos};
  const double short_sum = std::log(0.55), long_sum = std::log(0.45 * 0.9 * 0.9 * 0.9);
  // sum / length^penalty: short wins for penalty 0 and 0.5, long for 1 and 2
  // (-0.598 vs -1.114; -0.423 vs -0.557; -0.299 vs -0.279; -0.149 vs -0.070).
  const std::vector<std::pair<double, std::vector<std::int64_t>>> cases{
      {0.0, short_one}, {0.5, short_one}, {1.0, long_one}, {2.0, long_one}};
  for (const auto& [penalty, expected] : cases) {
    const bool short_wins = short_sum / std::pow(2, penalty) > long_sum / std::pow(4, penalty);
    ASSERT_EQ(short_wins, expected == short_one) << "hand computation, penalty " << penalty;
    GenerationOptions options = beams(2);
    options.length_penalty = penalty;
    EXPECT_EQ(run(table_weights(kShortOrLong), {0}, options), Sequences{expected})
        << "penalty " << penalty;
  }
}

TEST(BeamSearch, EarlyStoppingEndsAnInputOnceItHasBeamSizeHypotheses) {
  // By step 3 "a eos" and "b e eos" are finished: with early stopping the search ends there,
  // before "b c d eos" (better at length penalty 1) finishes.
  GenerationOptions options = beams(2);
  EXPECT_EQ(run(table_weights(kShortOrLong), {0}, options), (Sequences{{4, 5, 6, kEos}}));
  options.early_stopping = true;
  EXPECT_EQ(run(table_weights(kShortOrLong), {0}, options), (Sequences{{3, kEos}}));
}

TEST(BeamSearch, BatchedEqualsOneInputAtATime) {
  for (const std::int64_t ngram : {0, 2}) {
    GenerationOptions options = beams(3);
    options.max_length = 9;
    options.min_length = 2;
    options.no_repeat_ngram_size = ngram;
    const auto weights = random_weights(7, 5, 0.5);
    const Sequences batched = run(weights, {0, 1, 2}, options);
    ASSERT_EQ(batched.size(), 3u);
    for (std::int64_t input = 0; input < 3; ++input)
      EXPECT_EQ(batched[input], run(weights, {input}, options).at(0)) << "input " << input;
    EXPECT_NE(batched[0], batched[1]);
  }
}

// All sequences over {eos, 3, 4, 5} that end at eos or at max_length, with the best total
// log-probability.
std::vector<std::int64_t> exhaustive_best(const NextWeights& weights, std::int64_t input,
                                          std::int64_t max_length) {
  std::vector<std::int64_t> best, current;
  double best_sum = -INFINITY;
  std::function<void()> extend = [&] {
    const bool ended = !current.empty() && current.back() == kEos;
    if (ended || static_cast<std::int64_t>(current.size()) == max_length) {
      const double sum = sequence_log_prob(weights, input, current);
      if (sum > best_sum) best_sum = sum, best = current;
      return;
    }
    for (const std::int64_t token : {kEos, std::int64_t{3}, std::int64_t{4}, std::int64_t{5}}) {
      current.push_back(token);
      extend();
      current.pop_back();
    }
  };
  extend();
  return best;
}

TEST(BeamSearch, HonoursReorderOnAModelOfTheWholePrefix) {
  // With 3 continuations and max_length 3, 9 beams keep every live prefix, and with length
  // penalty 0 the stopping rule is exact: beam search must find the exhaustive optimum. The
  // model's numbers depend on each row's whole history, so rows fed another beam's tokens
  // (reorder ignored) would lead it astray.
  GenerationOptions options = beams(9);
  options.max_length = 3;
  options.length_penalty = 0;
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    // A rare eos, so that the best sequences are long and their last tokens depend on the
    // model's state after two reorders.
    const auto weights = random_weights(6, seed, 0.05);
    const Sequences found = run(weights, {0, 1}, options);
    for (std::int64_t input = 0; input < 2; ++input)
      EXPECT_EQ(found[input], exhaustive_best(weights, input, options.max_length))
          << "seed " << seed << " input " << input;
  }
}

}  // namespace
}  // namespace strata::decode
