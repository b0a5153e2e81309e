#include "strata/text/gpt2_pretokenizer.h"

#include <array>

#include <utf8proc.h>

#include "strata/core/utf8.h"

namespace strata {

namespace {

enum class CharClass : unsigned char { Letter, Number, Space, Other };

struct Char {
  CharClass cls;
  std::size_t length;  // bytes
};

bool is_white_space(char32_t c) {
  // Unicode White_Space: \t..\r, U+0085, and the separators Zs, Zl, Zp.
  if ((c >= 0x09 && c <= 0x0D) || c == 0x85) return true;
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_ZS || category == UTF8PROC_CATEGORY_ZL ||
         category == UTF8PROC_CATEGORY_ZP;
}

CharClass classify(char32_t c) {
  if (is_white_space(c)) return CharClass::Space;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return CharClass::Letter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::Number;
    default:
      return CharClass::Other;
  }
}

// ASCII is most text; look it up instead of asking utf8proc.
const std::array<CharClass, 128>& ascii_classes() {
  static const std::array<CharClass, 128> table = [] {
    std::array<CharClass, 128> t{};
    for (char32_t c = 0; c < 128; ++c) t[c] = classify(c);
    return t;
  }();
  return table;
}

Char char_at(std::string_view text, std::size_t i) {
  const unsigned char b = static_cast<unsigned char>(text[i]);
  if (b < 0x80) return {ascii_classes()[b], 1};
  const std::size_t length = utf8_sequence_length(text, i);
  if (length == 0) return {CharClass::Other, 1};  // an invalid byte stands alone
  return {classify(utf8_decode_at(text, i, length)), length};
}

// Length of the contraction ('s 't 're 've 'm 'll 'd) at text[i] == '\'', or 0.
std::size_t contraction_length(std::string_view text, std::size_t i) {
  const std::string_view rest = text.substr(i + 1);
  if (rest.empty()) return 0;
  if (rest[0] == 's' || rest[0] == 't' || rest[0] == 'm' || rest[0] == 'd') return 2;
  if (rest.starts_with("re") || rest.starts_with("ve") || rest.starts_with("ll")) return 3;
  return 0;
}

}  // namespace

bool Gpt2PreTokenizer::next(std::string_view& piece) {
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  if (start >= n) return false;

  if (text_[start] == '\'') {
    if (const std::size_t length = contraction_length(text_, start)) {
      pos_ = start + length;
      piece = text_.substr(start, length);
      return true;
    }
  }

  // " ?X+" for X in letters, numbers, others: an optional single space joins the run after it.
  std::size_t run = start;
  Char c = char_at(text_, run);
  if (text_[start] == ' ' && start + 1 < n) {
    const Char after = char_at(text_, start + 1);
    if (after.cls != CharClass::Space) {
      run = start + 1;
      c = after;
    }
  }
  if (c.cls != CharClass::Space) {
    std::size_t end = run + c.length;
    while (end < n) {
      const Char more = char_at(text_, end);
      if (more.cls != c.cls) break;
      end += more.length;
    }
    pos_ = end;
    piece = text_.substr(start, end - start);
    return true;
  }

  // "\s+(?!\S)|\s+": a whitespace run, less its last character when a non-space follows
  // (that character then starts the next piece, e.g. " word"), unless it is the only one.
  std::size_t end = start + c.length;
  std::size_t last = start;
  while (end < n) {
    const Char more = char_at(text_, end);
    if (more.cls != CharClass::Space) break;
    last = end;
    end += more.length;
  }
  if (end < n && last > start) end = last;
  pos_ = end;
  piece = text_.substr(start, end - start);
  return true;
}

std::vector<std::string_view> gpt2_pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  Gpt2PreTokenizer scanner(text);
  std::string_view piece;
  while (scanner.next(piece)) pieces.push_back(piece);
  return pieces;
}

}  // namespace strata
