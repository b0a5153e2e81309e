#include "strata/data/segmentation_examples.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/data/parallel_documents.h"
#include "strata/doc/dataset.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {


struct Specials {
  std::int32_t cls = 0, sep = 0;
};

Specials specials_of(const Tokenizer& tokenizer, const SegmentationOptions& options) {
  if (options.context_tokens == 0)
    throw Error("segmentation examples: context_tokens must be at least 1");
  const auto cls = tokenizer.bos_id();
  if (!cls)
    throw Error(fmt::format("segmentation examples: [CLS] is the tokenizer's bos token; this {} "
                            "tokenizer has none",
                            tokenizer.kind()));
  const auto sep = tokenizer.sep_id() ? tokenizer.sep_id() : tokenizer.eos_id();
  if (!sep)
    throw Error(fmt::format("segmentation examples: [SEP] is the tokenizer's sep token (or its "
                            "eos); this {} tokenizer has neither",
                            tokenizer.kind()));
  return {*cls, *sep};
}

// The candidates a document keeps out of `count`: all, or `most` evenly spaced (the middle
// of each of `most` equal stretches).
std::vector<std::size_t> kept_candidates(std::size_t count, std::size_t most) {
  std::vector<std::size_t> kept;
  if (most == 0 || count <= most) {
    for (std::size_t c = 0; c < count; ++c) kept.push_back(c);
    return kept;
  }
  for (std::size_t k = 0; k < most; ++k) kept.push_back((2 * k + 1) * count / (2 * most));
  return kept;
}

// [CLS] tokens [left, boundary) [SEP] tokens [boundary, right) [SEP], with the document's ids.
Layout candidate_layout(const Layout& document, std::size_t left, std::size_t boundary,
                        std::size_t right, Specials specials) {
  Layout out;
  const auto push = [&](std::int32_t token, std::int32_t section, std::int32_t paragraph,
                        std::int32_t sentence, std::int32_t segment) {
    out.token.push_back(token);
    out.position.push_back(static_cast<std::int32_t>(out.position.size()));
    out.section.push_back(section);
    out.paragraph.push_back(paragraph);
    out.sentence.push_back(sentence);
    out.segment.push_back(segment);
  };
  const auto copy = [&](std::size_t from, std::size_t to, std::int32_t segment) {
    for (std::size_t i = from; i < to; ++i)
      push(document.token[i], document.section[i], document.paragraph[i], document.sentence[i],
           segment);
  };
  push(specials.cls, 0, -1, -1, 0);
  copy(left, boundary, 0);
  push(specials.sep, 0, -1, -1, 0);
  copy(boundary, right, 1);
  push(specials.sep, 0, -1, -1, 1);
  out.tree = document.tree;
  return out;
}

std::vector<SegmentationExample> make(const Document& document, const Tokenizer& tokenizer,
                                      const SegmentationOptions& options, Specials specials) {
  const Layout layout = make_layout(document, tokenizer);
  std::vector<std::size_t> starts;  // the first token of each sentence with tokens
  for (std::size_t i = 0; i < layout.size(); ++i)
    if (i == 0 || layout.sentence[i] != layout.sentence[i - 1]) starts.push_back(i);
  if (starts.size() < 2) return {};

  const std::size_t context = options.context_tokens;
  std::vector<SegmentationExample> examples;
  for (const std::size_t c : kept_candidates(starts.size() - 1, options.max_candidates_per_document)) {
    const std::size_t boundary = starts[c + 1];
    SegmentationExample example;
    example.id = document.id + ":" + std::to_string(c);
    example.layout = candidate_layout(layout, boundary - std::min(boundary, context), boundary,
                                      std::min(layout.size(), boundary + context), specials);
    example.label = layout.section[boundary - 1] != layout.section[boundary];
    examples.push_back(std::move(example));
  }
  return examples;
}

}  // namespace

std::vector<SegmentationExample> make_segmentation_examples(const Document& document,
                                                            const Tokenizer& tokenizer,
                                                            const SegmentationOptions& options) {
  return make(document, tokenizer, options, specials_of(tokenizer, options));
}

std::vector<SegmentationExample> load_segmentation_examples(const std::filesystem::path& jsonl,
                                                            const Tokenizer& tokenizer,
                                                            const SegmentationOptions& options,
                                                            bool show_progress,
                                                            SegmentationLoadStats* stats_out) {
  const Specials specials = specials_of(tokenizer, options);
  DatasetReader reader(jsonl);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  SegmentationLoadStats stats;
  std::vector<SegmentationExample> examples;
  std::vector<Document> batch;

  const auto tokenize_batch = [&] {
    std::vector<std::vector<SegmentationExample>> made = make_in_parallel<std::vector<SegmentationExample>>(
        batch, progress, [&](const Document& d) { return make(d, tokenizer, options, specials); });
    for (std::vector<SegmentationExample>& candidates : made) {
      stats.skipped += candidates.empty();
      for (SegmentationExample& example : candidates) {
        stats.boundaries += example.label;
        examples.push_back(std::move(example));
      }
    }
    batch.clear();
  };

  Document document;
  while (reader.next(document)) {
    ++stats.documents;
    batch.push_back(std::move(document));
    if (batch.size() == kDocumentBatch) tokenize_batch();
  }
  tokenize_batch();
  progress.finish();
  stats.candidates = examples.size();

  if (examples.empty())
    throw error_at(jsonl, 0, "",
                   stats.documents == 0 ? "no documents"
                                        : "no document has two sentences (a candidate boundary "
                                          "lies between two)");
  if (stats.skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents with fewer than two sentences (no candidate "
                     "boundary)",
                     jsonl.string(), stats.skipped, stats.documents));
  if (show_progress)
    std::fprintf(stderr, "%s: %zu candidate boundaries of %zu documents, %zu true (%.1f%%)\n",
                 jsonl.string().c_str(), stats.candidates, stats.documents - stats.skipped,
                 stats.boundaries, 100.0 * static_cast<double>(stats.boundaries) /
                                       static_cast<double>(stats.candidates));
  if (stats_out) *stats_out = stats;
  return examples;
}

std::vector<std::size_t> segmentation_costs(std::span<const SegmentationExample> examples) {
  std::vector<std::size_t> costs;
  costs.reserve(examples.size());
  for (const SegmentationExample& example : examples) costs.push_back(example.layout.size());
  return costs;
}

}  // namespace strata
