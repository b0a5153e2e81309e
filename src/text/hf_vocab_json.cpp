#include "hf_vocab_json.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata {

using nlohmann::json;

json parse_json_file(const std::filesystem::path& file) {
  json object = json::parse(read_file(file), nullptr, false);
  if (object.is_discarded()) throw Error(file.string() + ": malformed JSON");
  return object;
}

std::int32_t token_id(const json& id, const std::filesystem::path& file, const char* field, std::string_view piece) {
  if (!id.is_number_integer())
    throw error_at(file, 0, field, fmt::format("piece '{}' has a non-integer id", piece));
  if (id.is_number_unsigned() ? id.get<std::uint64_t>() > 0x7fffffffu
                              : (id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > 0x7fffffff))
    throw error_at(file, 0, field, fmt::format("piece '{}' has the id {}, outside 0 .. 2^31 - 1", piece, id.dump()));
  return id.get<std::int32_t>();
}

std::unordered_map<std::string, std::int32_t> read_vocab(const json& object, const std::filesystem::path& file,
                                                         const char* field) {
  if (!object.is_object()) throw error_at(file, 0, field, "expected an object of piece: id");
  std::unordered_map<std::string, std::int32_t> vocab;
  for (const auto& [piece, id] : object.items()) vocab.emplace(piece, token_id(id, file, field, piece));
  return vocab;
}

HfVocabJson hf_vocab_json(const std::vector<std::string>& pieces, const std::vector<bool>& is_added,
                          const SpecialTokens& specials) {
  const std::vector<std::string> special_list = specials.all();
  HfVocabJson out{nlohmann::ordered_json::object(), nlohmann::ordered_json::array()};
  for (std::size_t id = 0; id < pieces.size(); ++id) {
    if (pieces[id].empty()) continue;
    out.vocab[pieces[id]] = id;
    if (!is_added[id]) continue;
    const bool special = std::find(special_list.begin(), special_list.end(), pieces[id]) != special_list.end();
    out.added_tokens.push_back({{"id", id},
                                {"content", pieces[id]},
                                {"single_word", false},
                                {"lstrip", false},
                                {"rstrip", false},
                                {"normalized", false},
                                {"special", special}});
  }
  return out;
}

}  // namespace strata
