#pragma once
// `strata bench linear`: strata's linear product (strata/nn/linear_product.h) against libtorch's
// (torch::linear on BLAS), forward + backward (y, dx, dW, db), on the linear layers of
// bench_training's model: rows = batch x tokens, d_model 256, d_ff 1024, vocabulary 8000. Both
// in one process, round by round in rotating order (strata/bench/timing.h), the paired median
// ratio per layer and its GFLOP/s, with the BLAS kernel and the product strata runs printed.
#include <cstdint>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct LinearBenchOptions {
  RunOptions run;         // rounds: 9, or 2 with --quick
  std::int64_t rows = 0;  // 0: 4096 (8 x 512 tokens), or 512 with --quick
};

void run_linear_bench(LinearBenchOptions options);

}  // namespace strata::bench
