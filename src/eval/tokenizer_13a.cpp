// The mteval-v13a tokeniser as SacreBLEU runs it: a few literal replacements, then four
// regex substitutions, then whitespace normalisation. Each substitution is re-created as a
// left-to-right scan that consumes matches without overlap, as Python's re.sub does.
//
// Working on bytes instead of code points gives the same output: every pattern names only
// ASCII characters except [^0-9], and a byte next to an ASCII '.' or ',' is always the whole
// of (or the end of) a code point, so matches start and end at the same places.
#include <string>
#include <string_view>

#include "strata/eval/bleu.h"

namespace strata {

namespace {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t hit = text.find(from); hit != std::string::npos;
       hit = text.find(from, start)) {
    out.append(text, start, hit - start);
    out.append(to);
    start = hit + from.size();
  }
  out.append(text, start);
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// The class ([\{-\~\[-\` -\&\(-\+\:-\@\/]): ASCII punctuation and symbols except
// ' - . , and the space (which the class includes, harmlessly).
bool is_split_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

// s/(A)(B)/<before>\1<middle>\2<after>/g for one-character classes A and B.
template <typename First, typename Second>
std::string substitute_pairs(std::string_view text, First first, Second second,
                             std::string_view before, std::string_view middle,
                             std::string_view after) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      out.append(before);
      out.push_back(text[i]);
      out.append(middle);
      out.push_back(text[i + 1]);
      out.append(after);
      i += 2;
    } else {
      out.push_back(text[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  std::string text = replace_all(std::string(line), "<skipped>", "");
  text = replace_all(std::move(text), "-\n", "");
  text = replace_all(std::move(text), "\n", " ");
  // In this order: "&amp;quot;" becomes "&quot;", not '"'.
  text = replace_all(std::move(text), "&quot;", "\"");
  text = replace_all(std::move(text), "&amp;", "&");
  text = replace_all(std::move(text), "&lt;", "<");
  text = replace_all(std::move(text), "&gt;", ">");

  std::string spaced = " ";
  spaced.reserve(text.size() * 2 + 2);
  for (const char c : text) {
    if (is_split_symbol(c)) {
      spaced.push_back(' ');
      spaced.push_back(c);
      spaced.push_back(' ');
    } else {
      spaced.push_back(c);
    }
  }
  spaced.push_back(' ');

  const auto not_digit = [](char c) { return !is_digit(c); };
  const auto is_dash = [](char c) { return c == '-'; };
  // Period and comma unless preceded by a digit, then unless followed by one.
  spaced = substitute_pairs(spaced, not_digit, is_period_or_comma, "", " ", " ");
  spaced = substitute_pairs(spaced, is_period_or_comma, not_digit, " ", " ", "");
  // A dash after a digit ("1-2" → "1 - 2").
  spaced = substitute_pairs(spaced, is_digit, is_dash, "", " ", " ");

  return join_tokens(spaced);
}

}  // namespace strata
