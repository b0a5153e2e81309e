#pragma once
// Small string helpers shared by the parsers.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

inline constexpr std::string_view kWhitespace = " \t\r\n\f\v";

inline bool is_space(char c) { return kWhitespace.find(c) != std::string_view::npos; }

// `s` without leading and trailing characters from `chars`.
inline std::string_view trim(std::string_view s, std::string_view chars = kWhitespace) {
  const std::size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(chars) + 1 - b);
}

// Lines split on '\n', a trailing '\r' removed from each; "a\n" gives {"a", ""}.
std::vector<std::string_view> split_lines(std::string_view text);

// The parts between `separator`s; "" gives {} and "a," gives {"a", ""}.
std::vector<std::string_view> split(std::string_view text, char separator);

// The items of a `separator`-separated list, trimmed, empty ones dropped, as owned strings (so a
// list read from a temporary, such as a config value, outlives it): " a, ,b " gives {"a", "b"}.
std::vector<std::string> split_list(std::string_view text, char separator = ',');

// The runs of non-whitespace characters (kWhitespace separates); "" and "  " give {}.
std::vector<std::string_view> split_words(std::string_view text);

// `text` as a decimal integer, read as std::stoll reads it (leading whitespace, an optional sign)
// but only when it is all used: nullopt for "", "3x", "3 ", "1.5" and numbers past int64.
std::optional<std::int64_t> parse_int64(std::string_view text);

// Whether `a` and `b` are equal but for the case of ASCII letters (headings, deb822 field names).
bool equals_ignoring_case(std::string_view a, std::string_view b);

// `text` safe inside XML (SVG) text and attribute values: & < > " ' as entities.
std::string xml_escape(std::string_view text);

// Glob match over the whole name: '*' matches any run of characters (dots included), '?'
// exactly one; every other character matches itself.
bool glob_match(std::string_view pattern, std::string_view name);

}  // namespace strata
