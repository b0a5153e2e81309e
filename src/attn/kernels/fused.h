#pragma once
// The fused block-sparse CPU kernel: attention tile by tile over the call's block mask
// (compiled here unless the call brings one), skipping tiles no pair can see and evaluating
// the predicate only in partial ones, with an online softmax that keeps O(tile²) memory per
// task (top-p heads keep one query tile's row of scores, O(tile × keys), since the keys kept
// depend on every query: fused_forward.cpp). Differentiable in q, k, v, bias_table and dense_bias through its own backward, which
// recomputes the weights from the saved log-sum-exp (FlashAttention style) instead of
// storing them. Same contract and numbers as the reference kernel (same seed, same Gumbel
// noise and dropout); fp32 and fp64 natively, bf16 computed in fp32.
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::attn {

at::Tensor fused_attention(const AttentionCall& call);

}  // namespace strata::attn
