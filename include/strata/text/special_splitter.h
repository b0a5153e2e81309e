#pragma once
// Finds special tokens whole in a text, so that "[SEC]" or "<|endoftext|>" become one token
// each instead of being pre-tokenised like prose. At each position the longest special
// token that starts there wins; the text between matches is handed on as ordinary text.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

class SpecialSplitter {
 public:
  SpecialSplitter() = default;
  // tokens[i] is matched as id ids[i]; empty tokens are ignored.
  explicit SpecialSplitter(const std::vector<std::pair<std::string, std::int32_t>>& tokens);

  // Calls on_text(string_view) for each stretch of ordinary text (never empty) and
  // on_special(int32_t id) for each special token, in order.
  template <typename OnText, typename OnSpecial>
  void split(std::string_view text, OnText&& on_text, OnSpecial&& on_special) const {
    std::size_t done = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto& candidates = by_first_byte_[static_cast<unsigned char>(text[i])];
      for (const auto& [token, id] : candidates) {  // longest first
        if (text.compare(i, token.size(), token) != 0) continue;
        if (i > done) on_text(text.substr(done, i - done));
        on_special(id);
        done = i + token.size();
        i = done - 1;
        break;
      }
    }
    if (done < text.size()) on_text(text.substr(done));
  }

 private:
  std::array<std::vector<std::pair<std::string, std::int32_t>>, 256> by_first_byte_;
};

}  // namespace strata
