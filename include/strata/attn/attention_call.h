#pragma once
// The attention engine's entry point: one call = one layer's scaled dot-product attention
// over already-projected heads. Models build an AttentionCall and hand it to attend() with
// the kernel their config names; which pairs may attend, and how strongly, is described here
// as data (padding, causality, prefix slots, and a LayerSpec over the tokens' layouts), so a
// kernel or a structured spec replaces another without any change to the models.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::attn {

struct BlockMask;

struct AttentionCall {
  at::Tensor q;  // [B, H, Lq, Dh]
  at::Tensor k;  // [B, H, P + Lk, Dh]: P prefix slots first, then the keys proper
  at::Tensor v;  // [B, H, P + Lk, Dh]
  // [B, Lk] bool, true for a real key, false for padding; undefined = no padding. Covers the
  // keys proper only: prefix slots are never padding.
  at::Tensor key_padding;
  // [B or 1, Lq] bool, true for a real query, false for padding; undefined = every query is
  // real. Padded queries still get outputs, but only TopP reads this: their weights do not
  // count in the key impact, so a padded batch keeps the keys each example keeps alone. In
  // self-attention without a cache the queries are the keys proper: this is key_padding.
  at::Tensor query_padding;
  bool causal = false;
  // Position of query 0 among the keys proper: query i may see key j <= i + query_offset
  // when causal. 0 in training; the cache length when decoding incrementally.
  std::int64_t query_offset = 0;
  std::int64_t prefix_len = 0;  // P: prefix keys, visible to every query unless the spec blocks
  double dropout = 0.0;         // on the attention probabilities, when training
  bool training = false;

  // The structured part. Null spec = every head plain (All + Softmax, no bias).
  const LayerSpec* spec = nullptr;
  const TokenLayout* query_layout = nullptr;  // [B, Lq] ids; needed by structural predicates
  const TokenLayout* key_layout = nullptr;    // [B, Lk] ids of the keys proper
  at::Tensor prefix_segment;  // [P] int32: each prefix slot's segment (PrefixBlock)
  at::Tensor bias_table;      // [H, relation_count(spec->bias)] float, learned
  at::Tensor dense_bias;      // [B or 1, H or 1, Lq, P + Lk], added to the scores, with gradient
  // Keys the counter-based generator for Gumbel noise and dropout: the same seed gives the
  // same noise in forward and backward, and in both kernels.
  std::uint64_t seed = 0;
  // Optional: a block mask compiled for this call's shapes, layouts and spec (reused across
  // layers that share them). The fused kernel compiles one when absent.
  const BlockMask* block_mask = nullptr;
};

enum class Kernel {
  Reference,  // libtorch ops on the dense score matrix; autograd for free
  Fused,      // tiled block-sparse CPU kernel with its own backward (kernels/fused.cpp)
};

// "reference" or "fused"; strata::Error naming the known kernels otherwise.
Kernel kernel_from_name(std::string_view name);
std::string_view kernel_name(Kernel kernel);

// The attention output [B, H, Lq, Dh]. A query row that can see no key gives zeros, not NaN.
// strata::Error when the spec needs a layout field, prefix segments or a bias the call lacks.
at::Tensor attend(const AttentionCall& call, Kernel kernel);

// attend() that also returns the attention weights [B, H, Lq, P + Lk] (before dropout),
// differentiable, for modules that read them (HIBRIDS-DEC's alignment). It runs the dense
// reference kernel: B × H × Lq × (P + Lk) memory.
at::Tensor attend_keeping_weights(const AttentionCall& call, at::Tensor& weights);

}  // namespace strata::attn
