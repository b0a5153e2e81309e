#pragma once
// `strata bench hibrids`: what a HIBRIDS bias costs a long-document encoder (seed 001, "Speed
// and size"). The bias lives in the fused kernel: the relation id of a pair comes from the two
// tokens' section ids through an S x S table, so memory grows as O(S^2 + L), never as O(L^2).
// Measured: forward + backward of the same encoder with and without the bias, and the peak
// memory of each, in one run. The cases are the recipes longformer, hibrids-enc and
// hibrids-s-enc at the benchmark's sizes, their window set to --window.
#include <cstdint>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct HibridsBenchOptions {
  RunOptions run;             // rounds: 5, or 1 with --quick
  std::int64_t length = 0;    // 0: 8192, or 2048 with --quick
  std::int64_t window = 256;  // half-width W of window(W, W)
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown case.
void run_hibrids_bench(HibridsBenchOptions options);

}  // namespace strata::bench
