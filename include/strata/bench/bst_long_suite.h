#pragma once
// `strata bench bst-long`: the long-context headline of thesis ch. 5 on this CPU. A stack of
// Block-State layers (BST:SH with an S4D SSM at the odd layers, SLIDE elsewhere, as the ch. 5
// models) trained for one step, forward + backward with a fixed random output gradient, at
// L = 1,048,576 tokens, beside a stack of SLIDE layers alone at the same length in the same
// run. Both run BlockStateLayer::forward_recomputed: the SSM over the whole sequence by FFT
// (O(L log L)), block attention and the feed-forward a span at a time (O(L W)), each span's
// graph made again in backward. Prints time, tokens/s, the ratio to SLIDE and the child's
// peak memory beside the tensors a step must hold at once.
#include <cstdint>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct BstLongBenchOptions {
  RunOptions run;              // rounds: 2, or 1 with --quick
  std::int64_t length = 0;     // 0: 1,048,576, or 65,536 with --quick
  std::int64_t d_model = 64;   // heads of 16; d_ff 4 d_model; the SSM D/4 wide, N = 16
  std::int64_t layers = 2;     // BST at the odd ones (0-based 1, 3, ...)
  std::int64_t window = 128;   // W
  std::int64_t span = 8192;    // tokens a recomputed span (a multiple of W)
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown
// case or a span that is not a multiple of W.
void run_bst_long_bench(BstLongBenchOptions options);

}  // namespace strata::bench
