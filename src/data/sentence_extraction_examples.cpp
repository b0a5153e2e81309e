#include "strata/data/sentence_extraction_examples.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/data/parallel_documents.h"
#include "strata/eval/evidence_oracle.h"
#include "strata/text/tokenizer.h"

namespace strata {

std::size_t SentenceExtractionExample::tokens() const {
  std::size_t total = 0;
  for (const auto& sentence : sentence_ids) total += sentence.size();
  return total;
}

std::vector<float> SentenceExtractionExample::oracle_membership() const {
  std::vector<float> labels(sentences.size(), 0.0f);
  for (std::size_t i : oracle) labels[i] = 1.0f;
  return labels;
}

std::optional<SentenceExtractionExample> make_sentence_extraction_example(const Document& document,
                                                                          const Tokenizer& tokenizer,
                                                                          const SentenceExtractionOptions& options) {
  if (options.max_sentences == 0 || options.max_sentence_tokens == 0)
    throw Error("sentence extraction examples: max_sentences and max_sentence_tokens must be positive");
  const std::vector<std::string> summary = summary_sentences(document.summary);
  if (options.needs_reference && summary.empty()) return std::nullopt;
  SentenceExtractionExample e;
  e.id = document.id;
  e.reference = document.summary;
  e.summary_sentences = summary.size();
  for (std::string& text : document_sentences(document)) {
    if (e.sentences.size() == options.max_sentences) break;
    std::vector<std::int32_t> ids = tokenizer.encode(text);
    if (ids.empty()) continue;
    if (ids.size() > options.max_sentence_tokens) ids.resize(options.max_sentence_tokens);
    e.sentence_ids.push_back(std::move(ids));
    e.sentences.push_back(std::move(text));
  }
  if (e.sentences.empty()) return std::nullopt;
  if (options.needs_reference) e.oracle = evidence_oracle(e.sentences, summary);
  return e;
}

std::vector<SentenceExtractionExample> load_sentence_extraction_examples(const std::filesystem::path& jsonl,
                                                                         const Tokenizer& tokenizer,
                                                                         const SentenceExtractionOptions& options,
                                                                         bool show_progress) {
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  std::vector<SentenceExtractionExample> examples;
  std::size_t skipped = 0;
  using Made = std::optional<SentenceExtractionExample>;
  const std::size_t documents = make_from_dataset<Made>(
      jsonl, progress, [&](const Document& d) { return make_sentence_extraction_example(d, tokenizer, options); },
      [&](Made& made) {
        if (made)
          examples.push_back(std::move(*made));
        else
          ++skipped;
      });
  progress.finish();
  if (examples.empty())
    throw error_at(jsonl, 0, "", documents == 0 ? "no documents" : "no document has both a sentence and a summary");
  if (skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents without a sentence or a summary", jsonl.string(), skipped,
                     documents));
  return examples;
}

std::size_t mean_summary_sentences(std::span<const SentenceExtractionExample> examples) {
  if (examples.empty()) return 1;
  double total = 0;
  for (const auto& e : examples) total += static_cast<double>(e.summary_sentences);
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(total / static_cast<double>(examples.size()))));
}

}  // namespace strata
