#pragma once
// The reference kernel: the dense score matrix with libtorch ops. Slow on long inputs and
// memory-hungry (B × H × Lq × (P + Lk) scores), but obviously correct, and autograd gives
// every gradient for free (the bias table's included); other kernels are tested against it.
//
// The whole spec (spec.h), in this order per head: scores = q·kᵀ/√Dh + bias_table[h][relation]
// + dense_bias; the visibility of PairRules::visible; the head's normaliser (Gumbel noise
// -log(-log(u)) with u = counter_uniform(seed, Gumbel, b, h, i, n), only when training, n in
// [0, P + Lk), drawn by tiles::add_gumbel as in the fused kernel: counter_gumbel's value up to
// float rounding); a fixed head's row is
// one-hot on its fixed key instead; a row that sees no key gives zeros. Then dropout while
// training: weight (b, h, i, n) kept when counter_keep(seed, rate, b, h, i, n), scaled by
// 1 / (1 - rate).
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::attn {

// `weights`, when given, receives the attention weights before dropout, [B, H, Lq, P + Lk].
at::Tensor reference_attention(const AttentionCall& call, at::Tensor* weights = nullptr);

// softmax over the visible keys (bool, broadcast to scores); a row that sees none gives zeros,
// through finite scores so that backward stays finite too. `visible` undefined = every key.
at::Tensor masked_softmax(at::Tensor scores, const at::Tensor& visible);

// TopP's keep mask [B, P + Lk] float (1 kept) from the key impact [B, P + Lk] (any float
// type): per batch item, the fewest keys of largest normalised impact whose impact sums to at
// least p, ties to the lower n; nothing kept where no query sees any key.
at::Tensor top_p_keep_from_impact(const at::Tensor& key_impact, double p);

// Bool, true where query i may see key n: [B or 1, 1, Lq, P + Lk] for a plain spec (undefined
// when every pair is visible), [B, H, Lq, P + Lk] otherwise.
at::Tensor dense_visibility(const AttentionCall& call);

}  // namespace strata::attn
