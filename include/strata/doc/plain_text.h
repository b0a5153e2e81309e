#pragma once
// Plain text → Document: paragraphs separated by blank lines, no sections.
#include <string_view>

#include "strata/doc/document.h"

namespace strata {

Document parse_plain_text(std::string_view text);

}  // namespace strata
