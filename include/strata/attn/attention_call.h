#pragma once
// The attention engine's entry point: one call = one layer's scaled dot-product attention
// over already-projected heads. Models build an AttentionCall and hand it to attend() with
// the kernel their config names; which pairs may attend is described here as data
// (padding, causality, prefix slots), so another kernel or a structured spec replaces the
// dense reference path without any change to the models.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace strata::attn {

struct AttentionCall {
  at::Tensor q;  // [B, H, Lq, Dh]
  at::Tensor k;  // [B, H, P + Lk, Dh]: P prefix slots first, then the keys proper
  at::Tensor v;  // [B, H, P + Lk, Dh]
  // [B, Lk] bool, true for a real key, false for padding; undefined = no padding. Covers the
  // keys proper only: prefix slots are never padding.
  at::Tensor key_padding;
  bool causal = false;
  // Position of query 0 among the keys proper: query i may see key j <= i + query_offset
  // when causal. 0 in training; the cache length when decoding incrementally.
  std::int64_t query_offset = 0;
  std::int64_t prefix_len = 0;  // P: prefix keys, visible to every query
  double dropout = 0.0;         // on the attention probabilities, when training
  bool training = false;
};

enum class Kernel {
  Reference,  // libtorch ops on the dense score matrix; autograd for free
};

// "reference"; strata::Error naming the known kernels otherwise.
Kernel kernel_from_name(std::string_view name);
std::string_view kernel_name(Kernel kernel);

// The attention output [B, H, Lq, Dh]. A query row that can see no key
// gives zeros, not NaN.
at::Tensor attend(const AttentionCall& call, Kernel kernel);

}  // namespace strata::attn
