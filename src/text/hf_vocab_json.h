#pragma once
// The parts of an HF tokenizer.json that every model type reads and writes the same way.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/text/tokenizer.h"

namespace strata {

// The file as JSON; strata::Error naming it when it is malformed.
nlohmann::json parse_json_file(const std::filesystem::path& file);

// A token id: an integer in [0, 2^31); strata::Error naming the file, `field` and the piece
// otherwise.
std::int32_t token_id(const nlohmann::json& id, const std::filesystem::path& file, const char* field,
                      std::string_view piece);

// An object of piece: id; strata::Error naming the file and `field` otherwise.
std::unordered_map<std::string, std::int32_t> read_vocab(const nlohmann::json& object,
                                                         const std::filesystem::path& file, const char* field);

struct HfVocabJson {
  nlohmann::ordered_json vocab;         // piece -> id, for the model's "vocab"
  nlohmann::ordered_json added_tokens;  // the root's "added_tokens"
};

// pieces: by id (an empty piece is a gap in the ids); is_added: the tokens matched whole,
// written as added tokens (special when `specials` names them).
HfVocabJson hf_vocab_json(const std::vector<std::string>& pieces, const std::vector<bool>& is_added,
                          const SpecialTokens& specials);

}  // namespace strata
