#pragma once
// Extractive reference systems: the lead baseline (the first N sentences) and the oracle
// (the single sentence that scores best against the reference).
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

class RougeScorer;

// The sentence of `document` with the highest ROUGE-1 F + ROUGE-2 F (with stemming) against
// `reference`; the earliest wins ties; empty for a document without sentences. An upper
// bound for any one-sentence extractive system, not a system: it reads the reference.
std::string oracle_sentence(const Document& document, std::string_view reference);

}  // namespace strata
