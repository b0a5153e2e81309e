#pragma once
// Decoding that reports every step as it happens, for callers that show text while it is
// written (`strata serve` streams it) or stop early on conditions decoding does not know
// (a stop string, a deadline). Greedy search and sampling only: beam search's best hypothesis
// is not known until the end.
#include <cstdint>
#include <functional>
#include <vector>

#include "strata/decode/generate.h"

namespace strata::decode {

// Called after each step with the token every row chose ([N], pad for rows already finished).
// Returning false ends decoding there: the sequences so far are returned.
using StepObserver = std::function<bool(const std::vector<std::int64_t>& tokens)>;

// generate() with an observer: greedy search, or sampling when options.do_sample.
// strata::Error for beam_size > 1.
Sequences generate_streaming(StepModel& model, const GenerationOptions& options, const StepObserver& observer);

}  // namespace strata::decode
