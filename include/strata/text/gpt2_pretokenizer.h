#pragma once
// GPT-2's pre-tokeniser: the regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// implemented as a hand-written scanner with the same leftmost-alternative semantics
// (std::regex has no \p classes and is slow). \s is Unicode White_Space, as in Python's
// `regex` module. Bytes that are not valid UTF-8 count as one "other" character each, so
// every byte string is split and nothing is lost: the pieces concatenate to the input.
#include <cstddef>
#include <string_view>
#include <vector>

namespace strata {

class Gpt2PreTokenizer {
 public:
  explicit Gpt2PreTokenizer(std::string_view text) : text_(text) {}

  // The next piece; false at the end of the text.
  bool next(std::string_view& piece);

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

std::vector<std::string_view> gpt2_pretokenize(std::string_view text);

}  // namespace strata
