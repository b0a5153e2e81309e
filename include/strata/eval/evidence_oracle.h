#pragma once
// The extractive oracle of thesis chapter 2 (Subramanian et al. 2020, "On extractive and
// abstractive neural document summarization with transformer language models"): for every
// summary sentence, the document sentences that best support it. It labels sentences for an
// extractor and, read as a summary, is the "Gold Ext" upper bound: it reads the reference.
//
// SCORE(i, j) = (ROUGE-1 F + ROUGE-2 F + ROUGE-L F) / 3 of document sentence i against
// summary sentence j, as RougeScorer computes them with stemming. Unlike the greedy oracle
// (a set that maximises ROUGE of the whole summary) each summary sentence picks on its own.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

inline constexpr std::size_t kEvidencePerSummarySentence = 2;

// Per summary sentence (in order), the indices of the `per_sentence` document sentences with
// the best mean ROUGE-1/2/L F1 against it, concatenated in summary-sentence order (not
// document order). Within one summary sentence the picks run from the best score down, ties
// to the earlier document sentence. A pair scoring 0 (not one word in common) is never
// picked, so a summary sentence may pick fewer. A document sentence picked already is not
// repeated (its first occurrence stays), so the result holds at most per_sentence * M
// distinct indices. Each sentence is tokenised once: the cost is that of the N * M scores.
std::vector<std::size_t> evidence_oracle(std::span<const std::string> document_sentences,
                                         std::span<const std::string> summary_sentences,
                                         std::size_t per_sentence = kEvidencePerSummarySentence);

// The sentences of a document in document order as text (every section's paragraphs'
// sentences). With a non-empty `section_heading`, those of the first section whose heading
// equals it (case-insensitive) and of its subsections, or of the whole document when no
// section matches: the sentences lead_summary takes its lead from.
std::vector<std::string> document_sentences(const Document& document,
                                            std::string_view section_heading = {});

// A summary split into sentences: each non-blank line (Document::summary keeps one sentence
// a line where the source marks them) split with split_sentences. A one-line summary without
// a full stop is one sentence.
std::vector<std::string> summary_sentences(std::string_view summary);

}  // namespace strata
