#pragma once
// Markdown → Document: ATX ("## Title") and setext (underlined) headings make the tree;
// lists, block quotes and fenced/indented code blocks are kept as paragraphs.
#include <string_view>

#include "strata/doc/document.h"

namespace strata {

// The title is the first level-1 heading when the text starts with one; the tree keeps it
// as a section all the same (so its paragraphs stay under it).
Document parse_markdown(std::string_view text);

}  // namespace strata
