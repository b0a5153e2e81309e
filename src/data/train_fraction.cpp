#include "strata/data/train_fraction.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"

namespace strata {

std::vector<std::size_t> train_fraction_indices(std::size_t n, double fraction, std::uint64_t seed) {
  if (!(fraction > 0 && fraction <= 1))
    throw Error(fmt::format("train fraction: must be in (0, 1], got {}", fraction));
  const auto wanted = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(n)));
  const std::size_t k = n == 0 ? 0 : std::max<std::size_t>(wanted, 1);
  // The first k of one random permutation: the subsets of a seed are nested.
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  SplitMix64 rng({seed, 0x7261696E66726163ULL});
  for (std::size_t i = 0; i < k; ++i) std::swap(order[i], order[i + rng.below(n - i)]);
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace strata
