#pragma once
// `strata bench prefix`: what the structured prefix designs of seed 000 (§4.1-4.2) cost an
// encoder. Blocking and truncation must make attention cheaper, not dearer: forward + backward
// time of the encoder at 1024 input tokens with P = 100 prefixes for Prefix-tune against
// HierBlock (K = 3), TruncSA and the others, as ratios to Prefix-tune measured in the same run.
//
// The cases are recipes (finetune, prefix, uniblock, hierblock, truncsa, softsa,
// hierblock-softsa) at the benchmark's sizes, compiled as training compiles them; the encoder
// of each is built from its per-layer attention specs. The step is prefix-tuning's: the
// backbone is frozen and each layer's prefix keys and values [1, H, P, Dh] are leaves that
// require a gradient, so backward runs through the whole stack down to the prefixes. Training
// mode, so SoftSA draws its Gumbel noise (and the residual dropout runs, the same in every case).
//
// Besides the time, each case reports the attention of its layers alone (one call per layer,
// forward + backward, random q k v of the model's shapes, summed over the layers) and the
// fraction of (query, key) pairs whose weight is not zero in the model itself (every key, and
// the prefix slots alone). The layers' attention comes from one more child that times every
// kind of layer interleaved in one process, with the tiles its block mask visits; another
// child builds every case's encoder and runs their steps interleaved, round by round: its
// "paired" ratios (the median of the per-round ratios to Prefix-tune) are the steadiest
// comparison on a shared machine.
//
// JSON: the options, "cases" {name: time_rounds' fields, recipe, label, ratio, cpu_ms,
// cpu_ratio, paired_ms, paired_cpu_ms, paired_ratio, paired_cpu_ratio, paired_round_ms,
// attention_ms, attention_ratio, attention_cpu_ms, attention_cpu_ratio, visible_fraction,
// prefix_visible_fraction, layer_visible, layer_prefix_visible, layer_kinds, kinds, peak_rss_mb,
// rss_growth_mb, process_maxrss_mb}, "kinds" {kind: attention_layer_ms,
// attention_layer_cpu_ms, vs_plain, cpu_vs_plain, rounds, tile, tile_density, partial_fraction}.
#include <cstdint>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct PrefixBenchOptions {
  RunOptions run;                // rounds: 5
  std::int64_t length = 1024;    // input tokens L
  std::int64_t prefixes = 100;   // P, for the recipes with prefixes
  std::int64_t blocks = 3;       // K: input segments and prefix groups, for the recipes that block
  std::int64_t layers = 6;
  std::int64_t d_model = 256;
  std::int64_t heads = 8;
  std::int64_t d_ff = 1024;
  double top_p = 0.95;  // TruncSA's p
  double tau = 1.0;     // SoftSA's Gumbel temperature
};

// The parent's run, or with run.child set, that case's child. strata::Error for an unknown
// case or options out of range (the message names the flag).
void run_prefix_bench(PrefixBenchOptions options);

}  // namespace strata::bench
