#pragma once
// The lead baseline: the first N sentences of a document as its summary.
#include <cstddef>
#include <string>
#include <string_view>

#include "strata/doc/document.h"

namespace strata {

// The first `sentences` sentences in document order, joined by "\n" (one sentence per line,
// as rougeLsum expects). With a non-empty `section_heading`, the lead is taken from the first
// section whose heading equals it (case-insensitive), falling back to the whole document
// when no section matches.
std::string lead_summary(const Document& document, std::size_t sentences,
                         std::string_view section_heading = {});

}  // namespace strata
