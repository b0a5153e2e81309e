#pragma once
// The loop greedy search and sampling share: one hypothesis per input, one token per row
// and step, chosen from the constrained scores.
#include <ATen/core/Tensor.h>

#include <functional>

#include "strata/decode/generate.h"

namespace strata::decode {

// scores: [N, V] float after constrain(); finished: [N] bool, rows whose choice is replaced
// by pad (their scores may all be -inf). Returns the [N] int64 next tokens.
using ChooseTokens =
    std::function<at::Tensor(const at::Tensor& scores, const at::Tensor& finished)>;

Sequences row_search(StepModel& model, const GenerationOptions& options,
                     const ChooseTokens& choose);

}  // namespace strata::decode
