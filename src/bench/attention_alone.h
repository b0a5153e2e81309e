#pragma once
// One layer's attention alone, as an attention module hands it to the engine, for the
// benchmarks' per-kind timings: q, k, v of a model's shapes (requiring grad), the spec and
// prefix groups the call points at (so they live as long as it), forward + backward.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "strata/attn/attention_call.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::bench {

struct AttentionAlone {
  at::Tensor q, k, v;
  at::Tensor segment;  // [P] prefix groups, when the spec blocks prefixes
  attn::LayerSpec spec;
  attn::AttentionCall call;
  void step() const {
    attn::attend(call, attn::Kernel::Fused).sum().backward();
    for (const at::Tensor& t : {q, k, v}) t.mutable_grad().reset();
  }
};

// Random q [1, heads, length, head_dim] and k, v with `prefix` slots before the keys (in
// `groups` [P] when it is defined), training mode; the layouts and the spec are handed over
// only when the spec is not plain, as the attention module does. `tokens` must outlive it.
std::shared_ptr<AttentionAlone> attention_alone(const attn::LayerSpec& spec, const attn::TokenLayout& tokens,
                                                std::int64_t length, std::int64_t heads, std::int64_t head_dim,
                                                std::int64_t prefix = 0, const at::Tensor& groups = {});

}  // namespace strata::bench
