#pragma once
// `strata bench patterns`: whether injected patterns (seed 003 §4.3) make a Transformer
// faster. The seed reports rho = 0.86 for 8 of 8 heads patterned and argues the attention then
// costs O((1 - rho) n^2); this measures what the fused kernel makes of it, matching_token heads
// run in token order included: forward + backward of an encoder on a man-page-like document,
// the recipes extractive (vanilla), extractive-patterns (4 heads patterned) and
// extractive-patterns-all (every head) at the benchmark's sizes; target vanilla / all >= 2.
//
// When the target is missed the numbers say where the time goes: each case also times one
// layer's attention alone (so the rest of the layer is the model minus layers x that), the
// block masks the kernel compiles, and one child times the attention with every head of one
// pattern, from which each case's attention is predicted both with perfect load balance and
// with the kernel's split of heads over threads.
//
// JSON: the options and the page ("document"), "speedup" (vanilla / patterns_n) and "target",
// "free_attention_ceiling", "cases" {vanilla, patterns_4, patterns_n: time_rounds' fields,
// recipe, rho, ratio, speedup, attention_layer_ms, attention_ms, attention_share, rest_ms,
// predicted_attention_layer_ms, peak_rss_mb, rss_growth_mb, block_mask} and "head_kinds"
// {plain, matching_token, ...: median_ms, vs_plain, rho, block_mask}.
#include <cstdint>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct PatternsBenchOptions {
  RunOptions run;              // rounds: 5, or 1 with --quick
  std::int64_t length = 0;     // 0: 2048, or 256 with --quick
  std::int64_t layers = 0;     // 0: 6, or 2 with --quick
  std::int64_t heads = 8;
  std::int64_t d_model = 0;    // 0: 256, or 64 with --quick
  std::int64_t patterned = 0;  // heads patterned in the last case; 0: every head
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown
// case or options the patterns cannot take (fewer than 4 heads patterned, ...).
void run_patterns_bench(PatternsBenchOptions options);

}  // namespace strata::bench
