#include "strata/eval/paired_bootstrap.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"
#include "strata/eval/bootstrap.h"

namespace strata {

PairedBootstrap paired_bootstrap(std::size_t n, const std::function<double(std::span<const std::size_t>, int)>& score,
                                 const PairedBootstrapOptions& options) {
  if (n == 0) throw Error("paired bootstrap: no examples to resample");
  if (options.resamples == 0) throw Error("paired bootstrap: resamples must be at least 1");
  if (!(options.confidence >= 0 && options.confidence <= 1))
    throw Error("paired bootstrap: confidence must be in [0, 1], got " + std::to_string(options.confidence));
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  PairedBootstrap result;
  result.a = score(all, 0);
  result.b = score(all, 1);
  result.resamples = options.resamples;
  std::vector<double> differences(options.resamples);  // A - B per resample
  const auto resamples = static_cast<std::ptrdiff_t>(options.resamples);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t r = 0; r < resamples; ++r) {
    SplitMix64 random({options.seed, static_cast<std::uint64_t>(r)});
    std::vector<std::size_t> sample(n);
    for (std::size_t& index : sample) index = random.below(n);
    differences[r] = score(sample, 0) - score(sample, 1);
  }
  if (std::any_of(differences.begin(), differences.end(), [](double d) { return std::isnan(d); }))
    throw Error("paired bootstrap: a resample's score is not a number");
  // Resamples where the full set's winner does not win (ties count against it).
  const bool a_wins = result.a > result.b;
  const auto losses = std::count_if(differences.begin(), differences.end(),
                                    [&](double d) { return a_wins ? !(d > 0) : !(d < 0); });
  result.p_value = static_cast<double>(losses) / static_cast<double>(options.resamples);
  std::sort(differences.begin(), differences.end());
  const double tail = (1 - options.confidence) / 2;
  result.difference_low = quantile_linear(differences, tail);
  result.difference_high = quantile_linear(differences, 1 - tail);
  return result;
}

}  // namespace strata
