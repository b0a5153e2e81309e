#pragma once
// One layer's attention alone, as an attention module hands it to the engine, for the
// benchmarks' per-kind timings: q, k, v of a model's shapes (requiring grad), the spec and
// prefix groups the call points at (so they live as long as it), forward + backward.
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::cli {

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

}  // namespace strata::cli
