#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <map>

#include "decode/toy_models.h"
#include "strata/decode/generate.h"

namespace strata::decode {
namespace {

using test_support::kEos;
using test_support::NextWeights;
using test_support::PrefixModel;
using test_support::random_weights;

Sequences run_sampling(const NextWeights& weights, const std::vector<std::int64_t>& inputs,
              const GenerationOptions& options) {
  PrefixModel model(inputs, weights);
  return generate(model, options);
}

GenerationOptions sampling(std::uint64_t seed) {
  GenerationOptions options;
  options.do_sample = true;
  options.seed = seed;
  options.max_length = 20;
  return options;
}

TEST(Sampling, TheSameSeedRepeatsWhateverTheGlobalRng) {
  const auto weights = random_weights(12, 3, 0.3);
  torch::manual_seed(1);
  const Sequences first = run_sampling(weights, {0, 1, 2, 3}, sampling(42));
  torch::manual_seed(2);
  (void)torch::rand({100});
  EXPECT_EQ(run_sampling(weights, {0, 1, 2, 3}, sampling(42)), first);
}

TEST(Sampling, DifferentSeedsDiffer) {
  const auto weights = random_weights(12, 3, 0.3);
  EXPECT_NE(run_sampling(weights, {0, 1, 2, 3}, sampling(1)), run_sampling(weights, {0, 1, 2, 3}, sampling(2)));
}

TEST(Sampling, TopKOneEqualsGreedy) {
  const auto weights = random_weights(12, 4, 0.5);
  GenerationOptions greedy;
  greedy.max_length = 20;
  const Sequences expected = run_sampling(weights, {0, 1, 2}, greedy);
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    GenerationOptions options = sampling(seed);
    options.top_k = 1;
    EXPECT_EQ(run_sampling(weights, {0, 1, 2}, options), expected) << "seed " << seed;
  }
}

// Frequencies of the first token over many rows drawn from {3: .5, 4: .3, 5: .15, 6: .05}.
std::map<std::int64_t, double> first_token_frequencies(const GenerationOptions& options) {
  const NextWeights weights = [](std::int64_t, const std::vector<std::int64_t>&) {
    return std::vector<double>{0, 0, 0, .5, .3, .15, .05};
  };
  const std::int64_t rows = 20000;
  std::map<std::int64_t, double> frequencies;
  for (const auto& sequence : run_sampling(weights, std::vector<std::int64_t>(rows, 0), options))
    frequencies[sequence.at(0)] += 1.0 / rows;
  return frequencies;
}

void expect_frequencies(const std::map<std::int64_t, double>& actual,
                        const std::map<std::int64_t, double>& expected) {
  // 20,000 draws: a standard deviation of 0.0035 at most, so 0.015 is over 4 of them.
  EXPECT_EQ(actual.size(), expected.size());
  for (const auto& [token, p] : expected) {
    const auto found = actual.find(token);
    ASSERT_NE(found, actual.end()) << "token " << token << " never drawn";
    EXPECT_NEAR(found->second, p, 0.015) << "token " << token;
  }
}

TEST(Sampling, DrawsInProportionToTheFilteredDistribution) {
  GenerationOptions options = sampling(5);
  options.max_length = 1;
  expect_frequencies(first_token_frequencies(options), {{3, .5}, {4, .3}, {5, .15}, {6, .05}});
  // Nucleus 0.75: {3, 4} (mass 0.8), renormalised.
  options.top_p = 0.75;
  expect_frequencies(first_token_frequencies(options), {{3, .625}, {4, .375}});
  // Top 3 of 4, renormalised over 0.95.
  options.top_p = 1;
  options.top_k = 3;
  expect_frequencies(first_token_frequencies(options), {{3, .5 / .95}, {4, .3 / .95}, {5, .15 / .95}});
  // Temperature 2: p^(1/2), renormalised (0.707, 0.548, 0.387, 0.224 over 1.866).
  options.top_k = 0;
  options.temperature = 2;
  expect_frequencies(first_token_frequencies(options),
                     {{3, .3789}, {4, .2935}, {5, .2075}, {6, .1198}});
}

TEST(Sampling, FinishedRowsStayFinished) {
  GenerationOptions options = sampling(9);
  options.max_length = 30;
  for (const auto& sequence : run_sampling(random_weights(6, 2, 3.0), {0, 1, 2, 3, 4}, options)) {
    const auto eos = std::find(sequence.begin(), sequence.end(), kEos);
    EXPECT_TRUE(eos == sequence.end() || eos + 1 == sequence.end());
  }
}

}  // namespace
}  // namespace strata::decode
