#include "strata/eval/paired_bootstrap.h"

#include <vector>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"

namespace strata {

PairedBootstrap paired_bootstrap(std::size_t n, const std::function<double(std::span<const std::size_t>, int)>& score,
                                 const PairedBootstrapOptions& options) {
  if (n == 0) throw Error("paired bootstrap: no examples to resample");
  if (options.resamples == 0) throw Error("paired bootstrap: resamples must be at least 1");
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  PairedBootstrap result;
  result.a = score(all, 0);
  result.b = score(all, 1);
  result.resamples = options.resamples;
  const bool a_wins = result.a > result.b;
  std::size_t losses = 0;  // resamples where the full set's winner does not win
#pragma omp parallel for schedule(static) reduction(+ : losses)
  for (std::size_t r = 0; r < options.resamples; ++r) {
    SplitMix64 random({options.seed, r});
    std::vector<std::size_t> sample(n);
    for (std::size_t& index : sample) index = random.below(n);
    const double a = score(sample, 0), b = score(sample, 1);
    if (a_wins ? !(a > b) : !(b > a)) ++losses;
  }
  result.p_value = static_cast<double>(losses) / static_cast<double>(options.resamples);
  return result;
}

}  // namespace strata
