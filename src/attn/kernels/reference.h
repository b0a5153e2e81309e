#pragma once
// The reference kernel: the dense score matrix with libtorch ops. Slow on long inputs and
// memory-hungry (B × H × Lq × Lk scores), but obviously correct, and autograd gives every
// gradient for free; other kernels are tested against it.
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::attn {

at::Tensor reference_attention(const AttentionCall& call);

// [B or 1, 1, Lq, P + Lk] bool, true where query i may see key j; undefined when every
// pair is visible.
at::Tensor dense_visibility(const AttentionCall& call);

}  // namespace strata::attn
