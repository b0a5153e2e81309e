#pragma once
// The strata sidecar: a small JSON file written beside a tokenizer model that records which
// kind of tokenizer it is and which pieces play the named special roles. Model files alone
// cannot say that "[SEP]" is the separator or which markers are structural. It is named
// strata-tokenizer.json so that it is never mistaken for an HF tokenizer.json.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "strata/text/tokenizer.h"

namespace strata {

inline constexpr const char* kSidecarName = "strata-tokenizer.json";

struct TokenizerSidecar {
  std::string kind;   // "sentencepiece" or "byte-bpe"
  std::string model;  // model file name, relative to the sidecar's directory
  SpecialTokens specials;
};

nlohmann::json to_json(const TokenizerSidecar& sidecar);
// `origin` names the file in error messages.
TokenizerSidecar sidecar_from_json(const nlohmann::json& object,
                                   const std::filesystem::path& origin);

// Writes dir/strata-tokenizer.json atomically.
void write_sidecar(const std::filesystem::path& dir, const TokenizerSidecar& sidecar);
// The sidecar in `dir`, or nullopt when there is none.
std::optional<TokenizerSidecar> read_sidecar(const std::filesystem::path& dir);
// The sidecar beside `model_file` when it describes that file, else nullopt.
std::optional<TokenizerSidecar> sidecar_for(const std::filesystem::path& model_file);

// Special tokens for a model that has no sidecar: each default-named token (<s>, </s>, <pad>,
// <unk>, [SEP], <mask>) that the vocabulary holds, GPT-2's "<|endoftext|>" as bos/eos/unk
// where those are missing, and the default structural markers present ([SEC],
// [SEC-L1]..[SEC-Ln] for consecutive n, [L↑], [L↓], [L-]).
SpecialTokens detect_specials(const std::function<bool(std::string_view)>& has_piece);

}  // namespace strata
