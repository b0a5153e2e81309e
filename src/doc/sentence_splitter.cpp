#include "strata/doc/sentence_splitter.h"

// Placeholder being replaced in this session by the rule-based splitter.
namespace strata {
std::vector<Span> split_sentences(std::string_view text) {
  std::vector<Span> out;
  std::size_t b = text.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return out;
  std::size_t e = text.find_last_not_of(" \t\n") + 1;
  out.push_back({b, e});
  return out;
}
}  // namespace strata
