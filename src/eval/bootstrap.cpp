#include "strata/eval/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"

namespace strata {

namespace {

Estimate estimate(std::vector<double>& resample_means, double mean, double tail) {
  std::sort(resample_means.begin(), resample_means.end());
  return Estimate{mean, quantile_linear(resample_means, tail), quantile_linear(resample_means, 0.5),
                  quantile_linear(resample_means, 1 - tail)};
}

}  // namespace

double quantile_linear(std::span<const double> sorted_values, double q) {
  const double position = q * static_cast<double>(sorted_values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted_values.size() - 1);
  const double t = position - static_cast<double>(below);
  const double a = sorted_values[below], b = sorted_values[above];
  // numpy's _lerp: from the nearer end, so that the result stays monotone in q.
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

RougeAggregate bootstrap_aggregate(std::span<const RougeScore> scores,
                                   const BootstrapOptions& options) {
  if (scores.empty()) throw Error("bootstrap: no scores to aggregate");
  if (options.resamples == 0) throw Error("bootstrap: resamples must be positive");
  if (!(options.confidence >= 0 && options.confidence <= 1)) {
    throw Error("bootstrap: confidence must be in [0, 1], got " +
                std::to_string(options.confidence));
  }
  const std::size_t n = scores.size();
  double sum_p = 0, sum_r = 0, sum_f = 0;
  for (const RougeScore& s : scores) {
    sum_p += s.precision;
    sum_r += s.recall;
    sum_f += s.fmeasure;
  }

  std::vector<double> mean_p(options.resamples), mean_r(options.resamples),
      mean_f(options.resamples);
  const auto resamples = static_cast<std::ptrdiff_t>(options.resamples);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < resamples; ++k) {
    SplitMix64 rng(SplitMix64(options.seed ^ (static_cast<std::uint64_t>(k) << 32)).next());
    double p = 0, r = 0, f = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const RougeScore& s = scores[rng.below(n)];
      p += s.precision;
      r += s.recall;
      f += s.fmeasure;
    }
    mean_p[k] = p / static_cast<double>(n);
    mean_r[k] = r / static_cast<double>(n);
    mean_f[k] = f / static_cast<double>(n);
  }
  const double tail = (1 - options.confidence) / 2;
  const auto count = static_cast<double>(n);
  return RougeAggregate{estimate(mean_p, sum_p / count, tail),
                        estimate(mean_r, sum_r / count, tail),
                        estimate(mean_f, sum_f / count, tail)};
}

}  // namespace strata
