#pragma once
// Low-resource training (seed 000 §6.6): a run trains on a fixed random fraction of its
// training set. The subset depends on the fraction and its own seed only, not on the
// training seed, so runs with different training seeds see the same examples; and the
// subsets of one seed are nested (the 5 % subset lies inside the 10 % one).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace strata {

// The indices, in increasing order, of the round(fraction * n) examples (at least 1 when
// n > 0) kept out of n. strata::Error unless 0 < fraction <= 1.
std::vector<std::size_t> train_fraction_indices(std::size_t n, double fraction, std::uint64_t seed);

// The kept examples in their original order.
template <class Example>
std::vector<Example> keep_train_fraction(std::vector<Example> examples, double fraction, std::uint64_t seed) {
  std::vector<Example> kept;
  for (std::size_t index : train_fraction_indices(examples.size(), fraction, seed))
    kept.push_back(std::move(examples[index]));
  return kept;
}

}  // namespace strata
