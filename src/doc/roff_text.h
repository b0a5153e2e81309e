#pragma once
// roff text: escape sequences rendered to plain UTF-8 (fonts and motions dropped), control
// line arguments split with roff's quoting. Private to the man page parser.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace strata::roff {

// Strings defined with .ds, expanded by \*x, \*(xx and \*[name]. Values are stored rendered.
using Strings = std::unordered_map<std::string, std::string>;

// The glyph of a named character (\(em, \[bu], \[u2014], \[char46], \C'rq'); empty when
// unknown, so an unknown glyph is dropped.
std::string named_char(std::string_view name);

// `line` with its comment (\" or \#) removed.
std::string_view strip_comment(std::string_view line);

// Appends `text` with escapes interpreted to `out`. Truncated escapes (a trailing
// backslash, "\f" or "\(x" at the end) are dropped without reading past the end. Returns
// true when the text ends with \c, which joins the next input line without a space.
bool render(std::string_view text, const Strings& strings, std::string& out);

// Arguments of a control line after its name: separated by blanks; a double-quoted
// argument may hold blanks, and "" inside it is a literal quote. Escapes are kept for
// render(); an escaped blank ("\ ") does not separate.
std::vector<std::string> split_args(std::string_view rest);

// Lines with a backslash before their newline continue on the next line; true when `line`
// (comment included) ends with such an unescaped backslash.
bool ends_with_continuation(std::string_view line);

}  // namespace strata::roff
