#pragma once
// Rule-based sentence splitting for English prose and man-page text: abbreviations
// ("e.g.", "Dr.", "i.e."), decimals and versions ("3.14", "v1.2.3"), ellipses, closing
// quotes and brackets after the full stop, option lists ("-a, --all") and enumerations
// ("1.", "(a)") are handled so they do not end a sentence by mistake.
#include <string_view>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

// Sentence spans, relative to `text`, trimmed of surrounding whitespace, in order,
// non-overlapping; empty for all-whitespace text.
std::vector<Span> split_sentences(std::string_view text);

}  // namespace strata
