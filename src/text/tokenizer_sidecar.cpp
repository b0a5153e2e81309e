#include "strata/text/tokenizer_sidecar.h"

#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata {

namespace {

constexpr const char* kFormat = "strata-tokenizer";

std::string optional_string(const nlohmann::json& object, const char* field,
                            const std::filesystem::path& origin) {
  if (!object.contains(field) || object[field].is_null()) return "";
  if (!object[field].is_string()) throw error_at(origin, 0, field, "expected a string");
  return object[field].get<std::string>();
}

}  // namespace

nlohmann::json to_json(const TokenizerSidecar& sidecar) {
  const SpecialTokens& s = sidecar.specials;
  return {{"format", kFormat},
          {"version", 1},
          {"kind", sidecar.kind},
          {"model", sidecar.model},
          {"special_tokens",
           {{"bos", s.bos},
            {"eos", s.eos},
            {"pad", s.pad},
            {"unk", s.unk},
            {"sep", s.sep},
            {"mask", s.mask},
            {"structural", s.structural}}}};
}

TokenizerSidecar sidecar_from_json(const nlohmann::json& object,
                                   const std::filesystem::path& origin) {
  if (!object.is_object() || object.value("format", "") != kFormat)
    throw Error(origin.string() + ": not a strata tokenizer sidecar (no \"format\": \"" + kFormat +
                "\")");
  TokenizerSidecar sidecar;
  sidecar.kind = optional_string(object, "kind", origin);
  if (sidecar.kind != "sentencepiece" && sidecar.kind != "byte-bpe")
    throw error_at(origin, 0, "kind",
                   "expected \"sentencepiece\" or \"byte-bpe\", got \"" + sidecar.kind + "\"");
  sidecar.model = optional_string(object, "model", origin);
  if (sidecar.model.empty()) throw error_at(origin, 0, "model", "missing model file name");
  const nlohmann::json special = object.value("special_tokens", nlohmann::json::object());
  if (!special.is_object()) throw error_at(origin, 0, "special_tokens", "expected an object");
  SpecialTokens& s = sidecar.specials;
  s.bos = optional_string(special, "bos", origin);
  s.eos = optional_string(special, "eos", origin);
  s.pad = optional_string(special, "pad", origin);
  s.unk = optional_string(special, "unk", origin);
  s.sep = optional_string(special, "sep", origin);
  s.mask = optional_string(special, "mask", origin);
  const nlohmann::json structural = special.value("structural", nlohmann::json::array());
  if (!structural.is_array()) throw error_at(origin, 0, "structural", "expected an array");
  for (const nlohmann::json& marker : structural) {
    if (!marker.is_string() || marker.get<std::string>().empty())
      throw error_at(origin, 0, "structural", "expected non-empty strings");
    s.structural.push_back(marker.get<std::string>());
  }
  return sidecar;
}

void write_sidecar(const std::filesystem::path& dir, const TokenizerSidecar& sidecar) {
  write_file_atomic(dir / kSidecarName, to_json(sidecar).dump(2) + "\n");
}

std::optional<TokenizerSidecar> read_sidecar(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / kSidecarName;
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  const nlohmann::json object = nlohmann::json::parse(read_file(file), nullptr, false);
  if (object.is_discarded()) throw Error(file.string() + ": malformed JSON");
  return sidecar_from_json(object, file);
}

std::optional<TokenizerSidecar> sidecar_for(const std::filesystem::path& model_file) {
  std::optional<TokenizerSidecar> sidecar = read_sidecar(model_file.parent_path());
  if (sidecar && sidecar->model != model_file.filename().string()) return std::nullopt;
  return sidecar;
}

SpecialTokens detect_specials(const std::function<bool(std::string_view)>& has_piece) {
  SpecialTokens s;
  for (std::string* named : {&s.bos, &s.eos, &s.pad, &s.unk, &s.sep, &s.mask})
    if (!has_piece(*named)) named->clear();
  const std::string endoftext = "<|endoftext|>";
  if (has_piece(endoftext))
    for (std::string* named : {&s.bos, &s.eos, &s.unk})
      if (named->empty()) *named = endoftext;
  int levels = 0;
  while (has_piece("[SEC-L" + std::to_string(levels + 1) + "]")) ++levels;
  for (const std::string& marker : SpecialTokens::default_structural(levels))
    if (has_piece(marker)) s.structural.push_back(marker);
  return s;
}

}  // namespace strata
