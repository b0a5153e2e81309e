#pragma once
// Which query rows vote in TopP's key impact (spec.h: TopP; seed 000 Eq. 2 sums the
// attention matrix over the queries): the real ones. A padded query still gets an output,
// but its weights must not decide which keys are kept, or an example padded into a batch
// would keep other keys than it keeps alone.
#include <ATen/core/Tensor.h>

#include "strata/attn/attention_call.h"

namespace strata::attn {

// [B, Lq] uint8 on the CPU, contiguous, 1 for a query that votes; undefined when every query
// does (the call has no query_padding). strata::Error when query_padding is not [B or 1, Lq].
at::Tensor query_votes(const AttentionCall& call);

}  // namespace strata::attn
