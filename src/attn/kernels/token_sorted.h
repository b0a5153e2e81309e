#pragma once
// Matching-token heads (seed 003 Eq. 4) hide most pairs, yet in document order no tile of
// them can be skipped: tokens seen once see every key, and frequent tokens match in every
// tile. With queries and keys reordered (tokens seen once first, then by token id) the visible
// pairs gather into blocks the block mask can skip (`strata bench patterns` shows the tiles).
// This runs those heads of a self-attention call in that order and the other heads as they
// are, and returns the output in document order: the same numbers as fused_attention(call).
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::attn {

// True when the call has matching_token heads and nothing that reading the tokens in another
// order would change: self-attention (one layout, as many queries as keys), no causal flag,
// no prefix, no bias, no dropout while training.
bool token_sorting_applies(const AttentionCall& call);

// fused_attention(call), with the matching_token heads computed in token order.
at::Tensor attend_token_sorted(const AttentionCall& call);

// The layout those heads run on: every item's tokens in token order (seen once first, then by
// token id, then by position). For diagnostics, e.g. compiling their block mask as the kernel does.
TokenLayout token_ordered_layout(const TokenLayout& layout);

}  // namespace strata::attn
