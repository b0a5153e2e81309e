#pragma once
// `strata bench bst`: the forward time of one Block-State Transformer layer (SH, MH, MF)
// against the SLIDE layer it extends, at several lengths (thesis ch. 5, Fig. 5.4 left), with
// each layer's floating-point operations counted analytically beside the time, since on two
// cores the blocks' parallelism pays less than on the thesis's accelerator.
#include <cstdint>
#include <string>
#include <vector>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct BstBenchOptions {
  RunOptions run;                     // rounds: 5, or 2 with --quick
  std::vector<std::int64_t> lengths;  // empty: 1k, 4k, 16k, 64k; 1k, 4k with --quick
  std::int64_t window = 128;          // W
  std::string kernel = "s4d";         // the SSM kernel: s4d or unstructured
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown case.
void run_bst_bench(BstBenchOptions options);

}  // namespace strata::bench
