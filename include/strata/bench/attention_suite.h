#pragma once
// `strata bench attention`: what the fused attention kernel costs in wall-clock and memory,
// against libtorch's composite attention and against itself on sparse specs, so that the
// claim "a spec that hides 86 % of the pairs costs about 14 % of the dense work" is measured.
// Cases: a) composite (L <= 8192), b) fused dense, c) fused window hiding ~50 %, d) fused
// same_section, e) c + a HIBRIDS bias, f) at::mm's sgemm (GFLOP/s), g) b with its tile products
// in BLAS; with a peer, p) PyTorch 2.6's SDPA dense and q) with c's window as a boolean mask,
// each in lockstep with b's and c's child (peer_program.h), round for round.
#include <cstdint>
#include <string>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct AttentionBenchOptions {
  RunOptions run;           // rounds: 7, or 3 with --quick
  std::int64_t length = 0;  // 0: 4096, or 1024 with --quick
  std::string peer;         // bench/peers/run, or empty: no PyTorch 2.6 rows
};

// The parent's run, or with run.child set, that case's child (`strata bench attention`
// re-executed). strata::Error for an unknown case.
void run_attention_bench(AttentionBenchOptions options);

}  // namespace strata::bench
