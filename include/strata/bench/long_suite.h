#pragma once
// `strata bench long`: the million-token case of issue 24. One structured attention layer
// through the fused kernel, batch 1, 8 heads × 64, fp32, forward + backward (a fixed random
// output gradient), at L = 1,048,576 tokens, each case in a child process of its own:
//   a) window(W, W) | global(G): a local window plus G tokens that see and are seen by all;
//   b) same_section over real section sizes: the sections of the installed man pages
//      (/usr/share/man/man1, in name order, a word a token), one after another until L.
//   c), d) the same two structures, the whole layer (embedding -> q, k, v -> attention ->
//      output projection) streamed chunk by chunk (nn/streamed_attention_layer.h): what fits
//      the 2 GB, which no layer holding whole L × 512 fp32 tensors can.
// Prints time, tokens/s and peak memory; a) and b) beside what attention's own tensors take
// (q, k, v, the output gradient, out, dq, dk, dv: 8 L × 512 floats, 16 GiB at L = 2^20), since
// memory that grows with L × W or L^2 would show above that.
#include <cstdint>
#include <string>
#include <vector>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct LongBenchOptions {
  RunOptions run;             // rounds: 2, or 1 with --quick
  std::int64_t length = 0;    // 0: 1,048,576, or 65,536 with --quick
  std::int64_t window = 256;  // W of a)
  std::int64_t global = 16;   // G of a)
  std::string man_dir = "/usr/share/man/man1";  // where b)'s and d)'s section sizes come from
  std::int64_t chunk = 16384;  // c), d): queries a chunk of the streamed layer
  std::vector<std::string> cases;  // ids or names; empty: all
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown
// case, or when b) finds no man page with sections.
void run_long_bench(LongBenchOptions options);

}  // namespace strata::bench
