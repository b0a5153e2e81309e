#pragma once
// Which heads the fused kernel runs in token order, and the layout they run on, for tools
// that show what the kernel does (`strata bench patterns` compiles their block masks as the
// kernel does). Defined with the kernel (src/attn/kernels/token_sorted.cpp).
#include "strata/attn/attention_call.h"
#include "strata/attn/token_layout.h"

namespace strata::attn {

// True when the call has matching_token heads and nothing that reading the tokens in another
// order would change: self-attention (one layout, as many queries as keys), no causal flag,
// no prefix, no bias, no dropout while training.
bool token_sorting_applies(const AttentionCall& call);

// Every item's tokens in token order (seen once first, then by token id, then by position):
// the layout those heads run on.
TokenLayout token_ordered_layout(const TokenLayout& layout);

}  // namespace strata::attn
