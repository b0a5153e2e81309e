#pragma once
// Paired bootstrap resampling (Koehn 2004, "Statistical Significance Tests for Machine
// Translation Evaluation"): is system A's corpus score better than system B's on this test
// set by more than the test set's own variance explains? Both systems are scored on the same
// resampled sets of example indices, so the test respects the pairing; the score is computed
// on each sample whole (corpus BLEU and chrF do not average over sentences).
//
// The p-value is the share of resamples in which the system that wins on the full test set
// does not win (ties count against it): one-sided in the observed direction, as Koehn and
// SacreBLEU's paired-bs report it. The effect's interval is the percentile interval of
// A - B over the resamples (numpy.percentile's linear interpolation, as eval/bootstrap.h's
// intervals). Draws come from splitmix64 streams, one per resample, so results are the same
// for any number of threads.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

namespace strata {

struct PairedBootstrapOptions {
  std::size_t resamples = 1000;
  std::uint64_t seed = 12345;
  double confidence = 0.95;  // of the interval of A - B
};

struct PairedBootstrap {
  double a = 0;  // A's score on the full test set
  double b = 0;  // B's
  double p_value = 1;
  std::size_t resamples = 0;
  // The `confidence` percentile interval of A - B over the resamples.
  double difference_low = 0, difference_high = 0;
};

// `score(indices, system)` is system 0 (A) or 1 (B)'s corpus score over the examples listed
// (with repeats). Called from several threads at once. strata::Error for n = 0, no resamples
// or a confidence outside [0, 1].
PairedBootstrap paired_bootstrap(std::size_t n, const std::function<double(std::span<const std::size_t>, int)>& score,
                                 const PairedBootstrapOptions& options = {});

}  // namespace strata
