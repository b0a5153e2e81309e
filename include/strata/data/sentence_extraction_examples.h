#pragma once
// Examples for the hierarchical extractors of thesis ch. 2 (Sent-CLF, Sent-PTR): a document as
// the token ids of its sentences, capped in sentences and in tokens per sentence (300 and 35
// in the thesis), with the chapter's oracle: for each summary sentence the two document
// sentences closest to it (eval/evidence_oracle.h), in summary order. The pointer learns that
// sequence; the classifier learns membership in it.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

struct SentenceExtractionOptions {
  std::size_t max_sentences = 300;       // later sentences are dropped
  std::size_t max_sentence_tokens = 35;  // a longer sentence keeps its first tokens
  // false: a document to summarize, not to learn from: no summary needed, no oracle.
  bool needs_reference = true;
};

struct SentenceExtractionExample {
  std::string id;
  std::vector<std::vector<std::int32_t>> sentence_ids;  // per kept sentence, 1..max tokens
  std::vector<std::string> sentences;                   // their text
  std::vector<std::size_t> oracle;  // indices into `sentences`, in summary order, distinct
  std::size_t summary_sentences = 0;  // M: the reference's sentences
  std::string reference;

  std::size_t tokens() const;  // over the kept sentences
  // 1 for each sentence the oracle picks (the classifier's targets).
  std::vector<float> oracle_membership() const;
};

// The example of a document, or nullopt when it has no sentence with a token or (with
// needs_reference) no summary.
// Sentences that encode to no token are dropped before the cap.
std::optional<SentenceExtractionExample> make_sentence_extraction_example(const Document& document,
                                                                          const Tokenizer& tokenizer,
                                                                          const SentenceExtractionOptions& options);

// Examples of every usable document of a JSONL dataset (any shape DatasetReader knows), in file
// order, made in parallel; skipped documents are counted with a warning. strata::Error naming
// the file when none is left, and on a bad line (FILE:LINE).
std::vector<SentenceExtractionExample> load_sentence_extraction_examples(const std::filesystem::path& jsonl,
                                                                         const Tokenizer& tokenizer,
                                                                         const SentenceExtractionOptions& options,
                                                                         bool show_progress);

// M̄: the mean number of summary sentences, rounded, at least 1 (the classifier's k at test).
std::size_t mean_summary_sentences(std::span<const SentenceExtractionExample> examples);

}  // namespace strata
