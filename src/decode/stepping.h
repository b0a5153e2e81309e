#pragma once
// What every search does with the model and its output, whatever it keeps per step.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "strata/decode/generation_options.h"
#include "strata/decode/step_model.h"

namespace strata::decode {

// model.step(tokens) as float [N, V], after checking its shape and that the options' token
// ids are inside the vocabulary (strata::Error otherwise).
at::Tensor next_scores(StepModel& model, const at::Tensor& tokens,
                       const GenerationOptions& options);

// tokens[0, length) cut after the first eos (kept), as a vector.
std::vector<std::int64_t> until_eos(const std::int64_t* tokens, std::int64_t length,
                                    std::int64_t eos_id);

}  // namespace strata::decode
