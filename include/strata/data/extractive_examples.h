#pragma once
// Extractive summarisation examples in the BERTSum form (Liu and Lapata 2019; seed 003
// §4.1): every sentence wrapped as [CLS] tokens [SEP], one label per sentence from a greedy
// ROUGE oracle (Nallapati et al. 2017), and the selection of summary sentences from scores.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doc/document.h"
#include "strata/doc/layout.h"

namespace strata {

class Tokenizer;

struct ExtractiveOptions {
  std::size_t max_tokens = 512;       // [CLS] and [SEP] included; at least 3
  std::size_t oracle_sentences = 3;   // most sentences the oracle labels 1; at least 1
  // false: a document to summarize, not to learn from: no summary needed, every label 0.
  bool needs_reference = true;
};

struct ExtractiveExample {
  std::string id;
  std::vector<std::int32_t> ids;  // [CLS] s1 [SEP] [CLS] s2 [SEP] ..., cut at a sentence end
  // Per token: position, section and paragraph of the document, sentence = index into
  // `sentences` ([CLS] and [SEP] belong to the sentence they wrap), segment 0.
  Layout layout;
  std::vector<std::string> sentences;  // the text of each kept sentence
  std::vector<int> labels;             // per kept sentence: 1 when the oracle picks it
  std::string reference;               // the summary
};

// The greedy oracle over `sentences`: repeatedly adds the sentence that most increases
// ROUGE-1 F + ROUGE-2 F (with stemming) of the selection (its sentences in document order,
// one per line) against `reference`; the earliest wins ties. Stops when no sentence
// increases the score or `max_sentences` are chosen. 1 for each chosen sentence.
std::vector<int> oracle_labels(const std::vector<std::string>& sentences, std::string_view reference,
                               std::size_t max_sentences);

// The example of a document, or nullopt when it has no sentence with tokens or (with
// needs_reference) an empty summary. The first sentence is always kept, cut inside when it alone exceeds max_tokens;
// later ones are kept while whole sentences fit. [CLS] is the tokenizer's "[CLS]" piece, else
// its bos; strata::Error when it has neither, or no sep token. A [SEP] inside the text is
// dropped, so that the model's marker head finds exactly one [SEP] per sentence.
std::optional<ExtractiveExample> make_extractive_example(const Document& document, const Tokenizer& tokenizer,
                                                         const ExtractiveOptions& options);

// The summary sentences: the `k` best by score (the earlier of equal scores first), with
// trigram blocking skipping a sentence that shares a word trigram (rouge-score's lower-cased
// words) with one already chosen, as BERTSum does. Indices in document order.
// strata::Error when scores and sentences differ in length.
std::vector<std::size_t> select_sentences(std::span<const float> scores, const std::vector<std::string>& sentences,
                                          std::size_t k, bool trigram_blocking);

// The chosen sentences joined by "\n" (one per line, as rougeLsum expects).
std::string join_sentences(const std::vector<std::string>& sentences, std::span<const std::size_t> chosen);

struct ExtractiveLoadStats {
  std::size_t documents = 0;  // documents read
  std::size_t skipped = 0;    // without a sentence or a summary
  std::size_t truncated = 0;  // examples that lost sentences or tokens to max_tokens
};

// Examples of every usable document of a JSONL dataset (any shape DatasetReader knows), in
// file order, made in parallel; skipped documents are counted with a warning. strata::Error
// naming the file when none is left, and on any bad line (FILE:LINE).
std::vector<ExtractiveExample> load_extractive_examples(const std::filesystem::path& jsonl,
                                                        const Tokenizer& tokenizer,
                                                        const ExtractiveOptions& options, bool show_progress,
                                                        ExtractiveLoadStats* stats = nullptr);

// The per-example cost plan_batches (token_batches.h) expects: its tokens.
std::vector<std::size_t> extractive_costs(std::span<const ExtractiveExample> examples);

}  // namespace strata
