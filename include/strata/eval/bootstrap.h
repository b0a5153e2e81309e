#pragma once
// Confidence intervals for mean ROUGE scores by bootstrap resampling, defined as
// rouge-score's scoring.BootstrapAggregator defines them:
//   - draw `resamples` samples of the per-example scores, each as large as the data, with
//     replacement; one draw of example indices serves precision, recall and F together;
//   - take the mean of each sample;
//   - low, mid, high = the (1 - confidence) / 2, 0.5 and 1 - (1 - confidence) / 2 quantiles
//     of those means with linear interpolation (numpy.percentile's default), i.e. the 2.5th,
//     50th and 97.5th percentiles by default.
// So `mid` is the MEDIAN OF RESAMPLE MEANS, which rouge-score reports as its headline score;
// it is close to, but not the same as, `mean`, the plain mean of the scores, reported too.
// The draws come from splitmix64 streams, one per resample, started from `seed` and the
// resample's number: results are reproducible and the same for any number of threads
// (resamples run in parallel with OpenMP), but they are not numpy's draws, so low/mid/high
// agree with rouge-score only up to sampling noise.
#include <cstddef>
#include <cstdint>
#include <span>

#include "strata/eval/rouge.h"

namespace strata {

struct BootstrapOptions {
  std::size_t resamples = 1000;
  double confidence = 0.95;
  std::uint64_t seed = 20040725;  // fixed default: the same data gives the same intervals
};

struct Estimate {
  double mean = 0;  // plain mean of the per-example values
  double low = 0;
  double mid = 0;
  double high = 0;
};

struct RougeAggregate {
  Estimate precision;
  Estimate recall;
  Estimate fmeasure;
};

// Throws strata::Error for no scores, no resamples or a confidence outside [0, 1].
RougeAggregate bootstrap_aggregate(std::span<const RougeScore> scores,
                                   const BootstrapOptions& options = {});

// The q-quantile (0 <= q <= 1) of sorted, non-empty values, interpolating linearly between the two
// nearest ranks as numpy.percentile(values, 100 * q) does.
double quantile_linear(std::span<const double> sorted_values, double q);

}  // namespace strata
