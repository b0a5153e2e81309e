#pragma once
// The loop greedy search and sampling share: one hypothesis per input, one token per row
// and step, chosen from the constrained scores.
#include <ATen/core/Tensor.h>

#include <functional>

#include "strata/decode/generate.h"
#include "strata/decode/streaming.h"

namespace strata::decode {

// scores: [N, V] float after constrain(); finished: [N] bool, rows whose choice is replaced
// by pad (their scores may all be -inf). Returns the [N] int64 next tokens.
using ChooseTokens =
    std::function<at::Tensor(const at::Tensor& scores, const at::Tensor& finished)>;

// The most likely token of each row.
ChooseTokens greedy_choice();
// A draw from each row's filtered distribution, from a generator seeded by options.seed that
// the returned function owns.
ChooseTokens sampling_choice(const GenerationOptions& options);

// `observer`, when set, sees each step's tokens and may stop the search.
Sequences row_search(StepModel& model, const GenerationOptions& options,
                     const ChooseTokens& choose, const StepObserver& observer = {});

}  // namespace strata::decode
