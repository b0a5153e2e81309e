#pragma once
// A model's outputs on given token ids, in the JSON shapes transformers users compare
// (inputs.json -> forward.json / generate.json), so an imported model can be checked against
// the user's own transformers run: what `strata forward` and `strata generate` print.
#include <string>

#include <nlohmann/json.hpp>

#include "strata/decode/generation_options.h"
#include "strata/recipes/loaded_model.h"

namespace strata::recipes {

// The model's outputs for `inputs` (transformers' argument names: input_ids, attention_mask,
// decoder_input_ids, token_type_ids, global_attention_mask), as nested lists with a
// "<name>_shape" beside each: logits, encoder_last_hidden_state (seq2seq), last_hidden_state
// and pooler_output (encoder). `source` names the inputs in errors.
nlohmann::json forward_outputs(const LoadedModel& model, const nlohmann::json& inputs, const std::string& source);

// {"sequences": [...]}: seq2seq rows start with the decoder start token, language-model rows
// with their prompt, as transformers' generate() returns them. Language-model prompts are
// unpadded rows of any length, run one at a time, or, with an attention_mask, one batch
// padded on the left.
nlohmann::json generate_outputs(const LoadedModel& model, const nlohmann::json& inputs,
                                const decode::GenerationOptions& options, const std::string& source);

}  // namespace strata::recipes
