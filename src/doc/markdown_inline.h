#pragma once
// Minimal removal of Markdown inline markup, private to the Markdown parser:
//   emphasis and strong (*a*, _a_, **a**, __a__) and strikethrough (~~a~~): the markers go
//     when an opening and a closing run pair up by CommonMark's flanking rules, so "2 * 3",
//     snake_case and an unpaired "*.txt" keep their characters;
//   code spans (`a`, ``a ` b``): the backticks go, the content is kept verbatim;
//   links [text](url "title") and [text][ref] → text; images ![alt](src) → alt;
//   autolinks <https://example.com> → https://example.com;
//   backslash escapes (\*, \[) → the character.
// Everything else (HTML, entities, bare [brackets]) is kept as written.
#include <string>
#include <string_view>

namespace strata::markdown {

std::string strip_inline(std::string_view text);

}  // namespace strata::markdown
