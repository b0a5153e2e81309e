#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/text/tokenizer.h"

namespace strata {

std::vector<std::string> SpecialTokens::all() const {
  std::vector<std::string> tokens;
  for (const std::string* named : {&bos, &eos, &pad, &unk, &sep, &mask})
    if (!named->empty()) tokens.push_back(*named);
  tokens.insert(tokens.end(), structural.begin(), structural.end());
  return tokens;
}

std::vector<std::string> SpecialTokens::default_structural(int levels) {
  std::vector<std::string> markers{"[SEC]"};
  for (int level = 1; level <= levels; ++level)
    markers.push_back("[SEC-L" + std::to_string(level) + "]");
  markers.insert(markers.end(), {"[L↑]", "[L↓]", "[L-]"});
  return markers;
}

std::int32_t require_eos(const Tokenizer& tokenizer, std::string_view needed_by) {
  const std::optional<std::int32_t> eos = tokenizer.eos_id();
  if (!eos)
    throw Error(std::string(needed_by) + " needs a tokenizer with an eos token; this " + tokenizer.kind() +
                " tokenizer has none");
  return *eos;
}

}  // namespace strata
