#include "strata/eval/bootstrap.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"

namespace strata {

namespace {

// splitmix64 (Steele, Lea and Flood 2014): a small, fast generator. Each resample has its
// own stream, started from the seed and the resample's number, so resamples can be drawn in
// parallel and the result does not depend on the number of threads.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // A uniform integer below n by Lemire's multiply-shift with rejection: unbiased, and the
  // same on every platform (std::uniform_int_distribution differs between libraries).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
    if (static_cast<std::uint64_t>(product) < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (static_cast<std::uint64_t>(product) < threshold) {
        product = static_cast<unsigned __int128>(next()) * n;
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

 private:
  std::uint64_t state_;
};

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
