#pragma once
// Decoding: a StepModel's next-token log-probabilities turned into token sequences by greedy
// search, beam search or sampling, with HF transformers' generate() as the reference.
//
// The model starts with B rows, one per input; all rows advance together, one [N] token
// tensor per step. The first step's tokens (the start token) are on the CPU; later tokens and
// reorder() indices are on the device of the log-probabilities the model returned. Beam
// search expands the B rows to B * beam_size after the first step. Afterwards the model's
// rows are in no particular state.
#include <cstdint>
#include <vector>

#include "strata/decode/generation_options.h"
#include "strata/decode/step_model.h"

namespace strata::decode {

// One sequence per input: the generated tokens without the start token, ending with eos
// when one was produced (otherwise max_length tokens).
using Sequences = std::vector<std::vector<std::int64_t>>;

// Checks the options (strata::Error naming the field), then dispatches: do_sample ->
// sample, beam_size > 1 -> beam_search, otherwise greedy_search.
Sequences generate(StepModel& model, const GenerationOptions& options);

// The most likely next token at every step. Sampling options are ignored.
Sequences greedy_search(StepModel& model, const GenerationOptions& options);
// beam_size beams per input; the best finished hypothesis by length-penalised score.
Sequences beam_search(StepModel& model, const GenerationOptions& options);
// Draws each token from the temperature / top-k / top-p filtered distribution with a
// generator seeded by options.seed, independent of the global RNG. A row's draws depend on
// its position in the batch, so B inputs together differ from one at a time.
Sequences sample(StepModel& model, const GenerationOptions& options);

}  // namespace strata::decode
