#include "strata/doc/sentence_splitter.h"

#include <algorithm>
#include <array>
#include <string>

#include "strata/core/strings.h"

// One pass over the text. A candidate boundary is a run of terminal punctuation (. ? ! …),
// optionally followed by closing quotes or brackets, followed by whitespace. Requiring the
// whitespace is what keeps 3.14, v1.2.3, 192.168.0.1, ls.1, www.example.com and "e.g.,"
// whole; the rules in is_boundary() then reject abbreviations, initials, enumerations and
// ellipses inside a sentence. A newline is a boundary only before a blank line, or before
// a list-item line when the paragraph starts with a list item.
namespace strata {

namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return is_upper(c) || is_lower(c); }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }

bool starts_with_at(std::string_view s, std::size_t i, std::string_view prefix) {
  return s.substr(i, prefix.size()) == prefix;
}

// Length of a terminal punctuation mark at s[i] ("…" is three bytes), else 0.
std::size_t terminal_length(std::string_view s, std::size_t i) {
  const char c = s[i];
  if (c == '.' || c == '?' || c == '!') return 1;
  if (starts_with_at(s, i, "\u2026")) return 3;
  return 0;
}

// Closing quotes and brackets that may follow the terminal mark: ." .) .' .” .’ .»
std::size_t closer_length(std::string_view s, std::size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == ')' || c == ']' || c == '}') return 1;
  for (std::string_view closer : {"\u201d", "\u2019", "\u00bb", "\u203a"})
    if (starts_with_at(s, i, closer)) return closer.size();
  return 0;
}

// Opening quotes and brackets that may precede a word: ("e.g. or “Dr.
std::size_t opener_length(std::string_view s, std::size_t i) {
  const char c = s[i];
  if (c == '"' || c == '\'' || c == '(' || c == '[' || c == '{' || c == '`') return 1;
  for (std::string_view opener : {"\u201c", "\u2018", "\u00ab", "\u2039"})
    if (starts_with_at(s, i, opener)) return opener.size();
  return 0;
}

// Abbreviations (lowercase, without the final dot) that never end a sentence: titles and
// Latin or reference forms that are always followed by more of the sentence.
constexpr std::array<std::string_view, 36> kContinuing = {
    "mr",   "mrs", "ms",   "dr",   "prof", "rev",  "hon",  "gen",  "col",  "capt", "lt",   "sgt",
    "e.g",  "i.e", "cf",   "vs",   "viz",  "fig",  "figs", "eq",   "eqs",  "sec",  "ch",   "chap",
    "vol",  "pp",  "nos",  "art",  "ref",  "refs", "ex",   "esp",  "ca",   "w.r.t", "a.k.a", "approx"};
// Abbreviations that end a sentence when the next word starts with a capital letter
// ("... and so on, etc. The next" vs. "etc. and", "No. 5").
constexpr std::array<std::string_view, 30> kMaybeFinal = {
    "etc",  "al",   "inc", "ltd", "co",  "corp", "jr",  "sr",  "st",   "no",
    "resp", "incl", "min", "max", "avg", "misc", "jan", "feb", "mar",  "apr",
    "jun",  "jul",  "aug", "sep", "sept", "oct", "nov", "dec", "ibid", "dept"};

bool contains(const auto& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// "U.S", "Ph.D", "a.m": letters in groups of one or two separated by dots.
bool is_dotted_acronym(std::string_view w) {
  if (w.find('.') == std::string_view::npos) return false;
  std::size_t run = 0;
  for (char c : w) {
    if (c == '.') {
      if (run == 0) return false;
      run = 0;
    } else if (is_alpha(c) && run < 2) {
      ++run;
    } else {
      return false;
    }
  }
  return run > 0;
}

bool is_roman_numeral(std::string_view w) {
  return !w.empty() && w.size() <= 4 &&
         std::all_of(w.begin(), w.end(), [](char c) { return std::string_view("ivxIVX").find(c) != std::string_view::npos; });
}

// The first character of the next word (after whitespace, opening quotes and a
// parenthesis), or '\0'. A square bracket is not skipped: "[FILE]..." is a placeholder.
char next_word_char(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  while (i < s.size() && s[i] != '[' && s[i] != '{') {
    const std::size_t n = opener_length(s, i);
    if (n == 0) break;
    i += n;
  }
  return i < s.size() ? s[i] : '\0';
}

std::size_t line_content_start(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

// A list item line starts with a bullet ("- ", "* ", "+ ", "• "), a number ("1. ", "2) "),
// a letter in parentheses ("(a) "), a letter ("a) ") or a command-line option ("-a, --all").
bool starts_list_item(std::string_view s, std::size_t i) {
  auto space_at = [&](std::size_t j) { return j >= s.size() || s[j] == ' ' || s[j] == '\t'; };
  if (i >= s.size()) return false;
  const char c = s[i];
  if ((c == '-' || c == '*' || c == '+') && space_at(i + 1)) return i + 1 < s.size();
  for (std::string_view bullet : {"\u2022", "\u2023", "\u25e6", "\u00b7", "\u2013"})
    if (starts_with_at(s, i, bullet) && space_at(i + bullet.size())) return true;
  if (c == '-') {  // an option: -a, --all, -1
    const std::size_t j = (i + 1 < s.size() && s[i + 1] == '-') ? i + 2 : i + 1;
    return j < s.size() && is_alnum(s[j]);
  }
  if (is_digit(c)) {
    std::size_t j = i;
    while (j < s.size() && j - i < 3 && is_digit(s[j])) ++j;
    return j < s.size() && (s[j] == '.' || s[j] == ')') && space_at(j + 1);
  }
  if (c == '(') {
    std::size_t j = i + 1;
    while (j < s.size() && j - i <= 3 && is_alnum(s[j])) ++j;
    return j > i + 1 && j < s.size() && s[j] == ')' && space_at(j + 1);
  }
  return is_alpha(c) && i + 1 < s.size() && s[i + 1] == ')' && space_at(i + 2);
}

bool line_is_blank(std::string_view s, std::size_t i) {
  while (i < s.size() && s[i] != '\n') {
    if (!is_space(s[i])) return false;
    ++i;
  }
  return true;
}

// Decides whether the run of terminal marks [mark_begin, mark_end) followed by whitespace
// at `after` ends the sentence that began at `sentence_begin`.
bool is_boundary(std::string_view s, std::size_t sentence_begin, std::size_t mark_begin,
                 std::size_t mark_end, std::size_t after) {
  // Punctuation standing alone (". and .." in a file listing, "the ? wildcard") is a word.
  if (mark_begin == sentence_begin || is_space(s[mark_begin - 1])) return false;
  const std::string_view marks = s.substr(mark_begin, mark_end - mark_begin);
  const char next = next_word_char(s, after);
  // A quotation goes on after its closing quote when a lowercase word follows:
  // "Really?" she asked.
  if (after > mark_end && is_lower(next)) return false;
  if (marks.find_first_of("?!") != std::string_view::npos) return true;
  if (marks.size() > 1) {
    // An ellipsis ends a sentence before a capital, except as a placeholder in a list or
    // synopsis: "a,b,..." and "[FILE]...".
    const char before = s[mark_begin - 1];
    return before != ',' && before != ']' && is_upper(next);
  }

  // A single '.': look at the word before it.
  std::size_t word_begin = mark_begin;
  while (word_begin > sentence_begin && !is_space(s[word_begin - 1])) --word_begin;
  while (word_begin < mark_begin) {
    const std::size_t n = opener_length(s, word_begin);
    if (n == 0) break;
    word_begin += n;
  }
  const std::string_view word = s.substr(word_begin, mark_begin - word_begin);
  if (word.empty()) return false;
  // An enumeration at the start of a sentence: "1. First", "iv. Fourth", "a. One".
  if (word_begin == sentence_begin &&
      ((word.size() <= 3 && std::all_of(word.begin(), word.end(), is_digit)) ||
       (word.size() == 1 && is_alpha(word[0])) || is_roman_numeral(word)))
    return false;
  if (word.size() == 1 && is_upper(word[0])) return false;  // an initial: "J. Smith"
  if (word.size() > 6) return true;
  std::string lower(word);
  for (char& c : lower) c = is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
  if (contains(kContinuing, lower)) return false;
  if (contains(kMaybeFinal, lower) || is_dotted_acronym(word)) return is_upper(next);
  return true;
}

}  // namespace

std::vector<Span> split_sentences(std::string_view s) {
  std::vector<Span> out;
  const std::size_t n = s.size();
  std::size_t begin = 0;
  while (begin < n && is_space(s[begin])) ++begin;
  if (begin == n) return out;
  const bool list = starts_list_item(s, line_content_start(s, begin));

  auto close = [&](std::size_t end) {
    std::size_t e = end;
    while (e > begin && is_space(s[e - 1])) --e;
    if (e > begin) out.push_back({begin, e});
    begin = end;
    while (begin < n && is_space(s[begin])) ++begin;
  };

  std::size_t i = begin;
  while (i < n) {
    if (s[i] == '\n') {
      const std::size_t next_line = i + 1;
      if (i > begin && (line_is_blank(s, next_line) ||
                        (list && starts_list_item(s, line_content_start(s, next_line))))) {
        close(i);
        i = begin;
      } else {
        ++i;
      }
      continue;
    }
    std::size_t mark_len = terminal_length(s, i);
    if (mark_len == 0) {
      ++i;
      continue;
    }
    std::size_t mark_end = i;
    while (mark_end < n && (mark_len = terminal_length(s, mark_end)) > 0) mark_end += mark_len;
    std::size_t after = mark_end;
    while (after < n) {
      const std::size_t closer = closer_length(s, after);
      if (closer == 0) break;
      after += closer;
    }
    if (after < n && is_space(s[after]) && is_boundary(s, begin, i, mark_end, after)) {
      close(after);
      i = begin;
    } else {
      i = mark_end;
    }
  }
  if (begin < n) close(n);
  return out;
}

}  // namespace strata
