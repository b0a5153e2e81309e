#include "hf_vocab_json.h"

#include <algorithm>

namespace strata {

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
