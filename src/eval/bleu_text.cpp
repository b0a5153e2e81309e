// Python's str.split() and str.lower() on UTF-8, the two string operations SacreBLEU's
// scores depend on besides its regexes.
#include <utf8proc.h>

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/utf8.h"
#include "strata/eval/bleu.h"

namespace strata {

namespace {

// Python's str.isspace(): bidirectional class WS, B or S, or category Zs.
bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// The code point at text[i] and its byte length; an invalid byte counts as one U+FFFD.
char32_t decode(std::string_view text, std::size_t i, std::size_t& length) {
  length = utf8_sequence_length(text, i);
  if (length == 0) {
    length = 1;
    return 0xFFFD;
  }
  return utf8_decode_at(text, i, length);
}

bool is_cased(char32_t c) {
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_LU || category == UTF8PROC_CATEGORY_LL ||
         category == UTF8PROC_CATEGORY_LT ||
         utf8proc_tolower(static_cast<utf8proc_int32_t>(c)) != static_cast<utf8proc_int32_t>(c) ||
         utf8proc_toupper(static_cast<utf8proc_int32_t>(c)) != static_cast<utf8proc_int32_t>(c);
}

// Unicode's Case_Ignorable: marks, format characters, modifier letters and symbols, and
// the word-internal punctuation of Word_Break MidLetter / MidNumLet / Single_Quote.
bool is_case_ignorable(char32_t c) {
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_SK:
      return true;
    default:
      break;
  }
  switch (c) {
    case 0x27: case 0x2E: case 0x3A: case 0xB7: case 0x387: case 0x5F4: case 0x2018:
    case 0x2019: case 0x2024: case 0x2027: case 0xFE13: case 0xFE52: case 0xFE55:
    case 0xFF07: case 0xFF0E: case 0xFF1A:
      return true;
    default:
      return false;
  }
}

// Unicode's Final_Sigma condition for the Σ at code point index `at`: a cased letter before
// it and none after it, skipping case-ignorable characters on both sides.
bool is_final_sigma(const std::vector<char32_t>& text, std::size_t at) {
  std::size_t before = at;
  while (before > 0 && is_case_ignorable(text[before - 1])) --before;
  if (before == 0 || !is_cased(text[before - 1])) return false;
  std::size_t after = at + 1;
  while (after < text.size() && is_case_ignorable(text[after])) ++after;
  return after == text.size() || !is_cased(text[after]);
}

}  // namespace

std::vector<std::string_view> split_python_whitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length;
    const char32_t c = decode(text, i, length);
    if (is_python_space(c)) {
      if (start != std::string_view::npos) tokens.push_back(text.substr(start, i - start));
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = i;
    }
    i += length;
  }
  if (start != std::string_view::npos) tokens.push_back(text.substr(start));
  return tokens;
}

std::string join_tokens(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const std::string_view token : split_python_whitespace(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(token);
  }
  return out;
}

std::string python_lower(std::string_view text) {
  std::vector<char32_t> code_points;
  std::vector<std::string_view> bytes;  // kept so that invalid bytes pass through unchanged
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length;
    code_points.push_back(decode(text, i, length));
    bytes.push_back(text.substr(i, length));
    i += length;
  }
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < code_points.size(); ++k) {
    const char32_t c = code_points[k];
    if (c < 0x80) {
      out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c));
    } else if (utf8_sequence_length(bytes[k], 0) == 0) {
      out.append(bytes[k]);
    } else if (c == 0x130) {  // İ: the one unconditional multi-character lowercase mapping
      out.push_back('i');
      utf8_append(out, 0x307);
    } else if (c == 0x3A3) {
      utf8_append(out, is_final_sigma(code_points, k) ? 0x3C2 : 0x3C3);
    } else {
      utf8_append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
    }
  }
  return out;
}

}  // namespace strata
