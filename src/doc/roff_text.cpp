#include "roff_text.h"

#include <charconv>

#include "strata/core/utf8.h"

namespace strata::roff {

namespace {

// Special characters as groff names them (groff_char(7)); the common ones in man pages.
const std::unordered_map<std::string_view, std::string_view>& glyphs() {
  static const std::unordered_map<std::string_view, std::string_view> table = {
      {"em", "\u2014"}, {"en", "\u2013"}, {"hy", "-"},      {"mi", "-"},      {"aq", "'"},
      {"dq", "\""},     {"lq", "\u201c"}, {"rq", "\u201d"}, {"oq", "\u2018"}, {"cq", "\u2019"},
      {"bq", "\u201e"}, {"Bq", "\u201e"}, {"Fo", "\u00ab"}, {"Fc", "\u00bb"}, {"fo", "\u2039"},
      {"fc", "\u203a"}, {"bu", "\u2022"}, {"co", "\u00a9"}, {"rg", "\u00ae"}, {"tm", "\u2122"},
      {"mu", "\u00d7"}, {"di", "\u00f7"}, {"<=", "\u2264"}, {">=", "\u2265"}, {"!=", "\u2260"},
      {"==", "\u2261"}, {"+-", "\u00b1"}, {"->", "\u2192"}, {"<-", "\u2190"}, {"<>", "\u2194"},
      {"ua", "\u2191"}, {"da", "\u2193"}, {"rA", "\u21d2"}, {"lA", "\u21d0"}, {"de", "\u00b0"},
      {"dg", "\u2020"}, {"dd", "\u2021"}, {"sc", "\u00a7"}, {"ps", "\u00b6"}, {"ct", "\u00a2"},
      {"Po", "\u00a3"}, {"Eu", "\u20ac"}, {"eu", "\u20ac"}, {"Ye", "\u00a5"}, {"ga", "`"},
      {"aa", "\u00b4"}, {"ha", "^"},      {"ti", "~"},      {"rs", "\\"},     {"sl", "/"},
      {"ba", "|"},      {"or", "|"},      {"br", "\u2502"}, {"ul", "_"},      {"ru", "_"},
      {"pl", "+"},      {"eq", "="},      {"lB", "["},      {"rB", "]"},      {"lC", "{"},
      {"rC", "}"},      {"la", "\u27e8"}, {"ra", "\u27e9"}, {"fm", "\u2032"}, {"sd", "\u2033"},
      {"sq", "\u25a1"}, {"ci", "\u25cb"}, {"OK", "\u2713"}, {"if", "\u221e"}, {"12", "\u00bd"},
      {"14", "\u00bc"}, {"34", "\u00be"}, {"ss", "\u00df"}, {":a", "\u00e4"}, {":o", "\u00f6"},
      {":u", "\u00fc"}, {":A", "\u00c4"}, {":O", "\u00d6"}, {":U", "\u00dc"}, {"'e", "\u00e9"},
      {"`e", "\u00e8"}, {"'a", "\u00e1"}, {"`a", "\u00e0"}, {"~n", "\u00f1"}, {",c", "\u00e7"},
      {"*a", "\u03b1"}, {"*b", "\u03b2"}, {"*g", "\u03b3"}, {"*d", "\u03b4"}, {"*e", "\u03b5"},
      {"*l", "\u03bb"}, {"*m", "\u03bc"}, {"*p", "\u03c0"}, {"*s", "\u03c3"}, {"*S", "\u03a3"},
      {"*W", "\u03a9"}, {"ff", "ff"},     {"fi", "fi"},     {"fl", "fl"},     {"Fi", "ffi"},
      {"Fl", "ffl"},    {"lh", "\u261c"}, {"rh", "\u261e"}, {"at", "@"},      {"sh", "#"},
      {"Do", "$"},      {"ho", "\u02db"}, {"a-", "\u00af"}, {"no", "\u00ac"}, {"AN", "\u2227"},
      {"OR", "\u2228"}, {"md", "\u22c5"}, {"pc", "\u00b7"}, {"tno", "\u00ac"}, {"radicalex", ""},
  };
  return table;
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Appends a code point when it is a printable scalar value; controls and surrogates are dropped.
void append_code_point(std::string& out, unsigned long cp) {
  if (cp == '\t' || (cp >= 0x20 && cp != 0x7f && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)))
    utf8_append(out, static_cast<char32_t>(cp));
}

// "u00E9" or "u0065_0301" (groff's Unicode names); false when `name` is not one.
bool append_unicode_name(std::string_view name, std::string& out) {
  if (name.size() < 5 || name[0] != 'u') return false;
  std::string decoded;
  std::size_t i = 1;
  while (i < name.size()) {
    std::size_t j = i;
    while (j < name.size() && is_hex(name[j])) ++j;
    if (j == i || j - i > 6 || (j < name.size() && name[j] != '_')) return false;
    unsigned long cp = 0;
    std::from_chars(name.data() + i, name.data() + j, cp, 16);
    append_code_point(decoded, cp);
    i = j + 1;
  }
  out += decoded;
  return true;
}

// The argument of an escape that takes a name: "x", "(xx" or "[name]". Advances i.
std::string_view read_name(std::string_view s, std::size_t& i) {
  if (i >= s.size()) return {};
  if (s[i] == '(') {
    const std::size_t begin = i + 1;
    i = std::min(s.size(), begin + 2);
    return s.substr(begin, i - begin);
  }
  if (s[i] == '[') {
    const std::size_t begin = i + 1;
    const std::size_t close = s.find(']', begin);
    i = close == std::string_view::npos ? s.size() : close + 1;
    return s.substr(begin, (close == std::string_view::npos ? s.size() : close) - begin);
  }
  return s.substr(i++, 1);
}

// The argument of an escape with a delimited argument: \h'1i', \w|text|. Advances i.
std::string_view read_delimited(std::string_view s, std::size_t& i) {
  if (i >= s.size()) return {};
  const char delimiter = s[i];
  const std::size_t begin = i + 1;
  const std::size_t close = s.find(delimiter, begin);
  i = close == std::string_view::npos ? s.size() : close + 1;
  return s.substr(begin, (close == std::string_view::npos ? s.size() : close) - begin);
}

// \s10, \s-2, \s+(12, \s[12], \s'12': the size argument. Advances i.
void skip_size(std::string_view s, std::size_t& i) {
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i >= s.size()) return;
  if (s[i] == '(' || s[i] == '[') {
    read_name(s, i);
  } else if (s[i] == '\'') {
    read_delimited(s, i);
  } else if (s[i] >= '0' && s[i] <= '9') {
    // Old roff allows two digits when the first is 1-3 (\s10 ... \s39).
    const bool two = s[i] >= '1' && s[i] <= '3' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9';
    i += two ? 2 : 1;
  }
}

}  // namespace

std::string named_char(std::string_view name) {
  std::string out;
  if (append_unicode_name(name, out)) return out;
  if (name.size() > 4 && name.substr(0, 4) == "char") {
    unsigned long cp = 0;
    const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), cp);
    if (ec == std::errc() && end == name.data() + name.size()) append_code_point(out, cp);
    return out;
  }
  const auto it = glyphs().find(name);
  if (it != glyphs().end()) out = it->second;
  return out;
}

std::string_view strip_comment(std::string_view line) {
  for (std::size_t i = 0; i + 1 < line.size(); ++i) {
    if (line[i] != '\\') continue;
    if (line[i + 1] == '"' || line[i + 1] == '#') return line.substr(0, i);
    ++i;  // skip the escaped character, so "\\" does not start an escape
  }
  return line;
}

bool ends_with_continuation(std::string_view line) {
  std::size_t backslashes = 0;
  while (backslashes < line.size() && line[line.size() - 1 - backslashes] == '\\') ++backslashes;
  return backslashes % 2 == 1;
}

bool render(std::string_view s, const Strings& strings, std::string& out) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const std::size_t backslash = s.find('\\', i);
    const std::size_t plain_end = backslash == std::string_view::npos ? n : backslash;
    out.append(s.substr(i, plain_end - i));
    if (plain_end == n || plain_end + 1 == n) return false;  // a trailing backslash is dropped
    const char e = s[plain_end + 1];
    i = plain_end + 2;
    switch (e) {
      case 'f': case 'F': case 'g': case 'k': case 'm': case 'M': case 'V': case 'Y': case '$':
        read_name(s, i);
        break;
      case 'n':  // a number register: \nx, \n(xx, \n[name], \n+x
        if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
        read_name(s, i);
        break;
      case '*': {
        const auto it = strings.find(std::string(read_name(s, i)));
        if (it != strings.end()) out += it->second;
        break;
      }
      case '(': case '[': {
        --i;  // read_name expects the opening ( or [
        out += named_char(read_name(s, i));
        break;
      }
      case 'C':
        out += named_char(read_delimited(s, i));
        break;
      case 'N': {
        const std::string_view code = read_delimited(s, i);
        unsigned long cp = 0;
        const auto [end, ec] = std::from_chars(code.data(), code.data() + code.size(), cp);
        if (ec == std::errc() && end == code.data() + code.size()) append_code_point(out, cp);
        break;
      }
      case 's':
        skip_size(s, i);
        break;
      case 'A': case 'b': case 'B': case 'D': case 'h': case 'H': case 'l': case 'L': case 'o':
      case 'R': case 'S': case 'v': case 'w': case 'x': case 'X': case 'Z':
        read_delimited(s, i);
        break;
      case '-': out += '-'; break;
      case 'e': case 'E': case '\\': out += '\\'; break;
      case '~': case ' ': case '0': out += ' '; break;
      case 't': out += '\t'; break;
      case '.': out += '.'; break;
      case '\'': out += '\''; break;
      case '`': out += '`'; break;
      case 'c': return true;  // the rest of the line is ignored and the next line joins
      case '"': case '#': return false;
      // Zero-width, motion, hyphenation and break escapes print nothing.
      case '&': case '|': case '^': case '%': case ':': case '/': case ',': case ')': case 'a':
      case 'd': case 'u': case 'r': case 'z': case 'p': case '{': case '}': case '?': case '!':
        break;
      default:
        out += e;  // groff prints the character of an unknown escape
    }
  }
  return false;
}

std::vector<std::string> split_args(std::string_view s) {
  std::vector<std::string> args;
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (true) {
    while (i < n && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= n) break;
    std::string arg;
    if (s[i] == '"') {
      ++i;
      while (i < n) {
        if (s[i] == '"') {
          if (i + 1 < n && s[i + 1] == '"') {
            arg += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        if (s[i] == '\\' && i + 1 < n) arg += s[i++];
        arg += s[i++];
      }
    } else {
      while (i < n && s[i] != ' ' && s[i] != '\t') {
        if (s[i] == '\\' && i + 1 < n) arg += s[i++];
        arg += s[i++];
      }
    }
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace strata::roff
