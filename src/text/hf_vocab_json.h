#pragma once
// The parts of an HF tokenizer.json that every model type writes the same way.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/text/tokenizer.h"

namespace strata {

struct HfVocabJson {
  nlohmann::ordered_json vocab;         // piece -> id, for the model's "vocab"
  nlohmann::ordered_json added_tokens;  // the root's "added_tokens"
};

// pieces: by id (an empty piece is a gap in the ids); is_added: the tokens matched whole,
// written as added tokens (special when `specials` names them).
HfVocabJson hf_vocab_json(const std::vector<std::string>& pieces, const std::vector<bool>& is_added,
                          const SpecialTokens& specials);

}  // namespace strata
