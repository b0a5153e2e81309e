#include "strata/data/seq2seq_examples.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <numeric>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

constexpr std::size_t kReadBatch = 1024;  // documents read before each parallel tokenization

void check(const TruncationOptions& options) {
  if (options.max_source_tokens < 2)
    throw Error("seq2seq examples: max_source_tokens must be at least 2 (a token and eos)");
  if (options.max_target_tokens < 2)
    throw Error("seq2seq examples: max_target_tokens must be at least 2 (a token and eos)");
  if (options.segments < 1) throw Error("seq2seq examples: segments must be at least 1");
}

// Keeps the tokens marked in `keep`, appends eos, and renumbers positions and segments.
void compact(Layout& layout, const std::vector<char>& keep, std::int32_t eos, int segments) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (!keep[i]) continue;
    layout.token[kept] = layout.token[i];
    layout.section[kept] = layout.section[i];
    layout.paragraph[kept] = layout.paragraph[i];
    layout.sentence[kept] = layout.sentence[i];
    ++kept;
  }
  layout.token.resize(kept);
  layout.section.resize(kept);
  layout.paragraph.resize(kept);
  layout.sentence.resize(kept);
  layout.token.push_back(eos);  // outside any sentence, in the root section, as make_layout
  layout.section.push_back(0);
  layout.paragraph.push_back(-1);
  layout.sentence.push_back(-1);
  const std::size_t n = layout.size();
  layout.position.resize(n);
  layout.segment.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    layout.position[p] = static_cast<std::int32_t>(p);
    layout.segment[p] = even_segment(p, n, segments);
  }
}

Layout make_source(const Document& document, const Tokenizer& tokenizer,
                   const TruncationOptions& options, std::int32_t eos, bool& truncated) {
  const std::size_t budget = options.max_source_tokens - 1;  // eos takes the last slot
  LayoutOptions layout_options;
  layout_options.segments = options.segments;
  // Head needs only the first tokens: one past the budget tells whether any were cut.
  if (options.policy == TruncationPolicy::Head) layout_options.max_tokens = budget + 1;
  Layout layout = make_layout(document, tokenizer, layout_options);
  truncated = layout.size() > budget;

  std::vector<char> keep(layout.size());
  if (options.policy == TruncationPolicy::Head) {
    std::fill_n(keep.begin(), std::min(budget, layout.size()), 1);
  } else {
    std::vector<std::size_t> lengths(layout.tree.size());
    for (std::int32_t s : layout.section) ++lengths[s];
    std::vector<std::size_t> quota = share_budget(lengths, budget);
    for (std::size_t i = 0; i < layout.size(); ++i) {
      std::size_t& left = quota[layout.section[i]];
      keep[i] = left > 0;
      left -= left > 0;
    }
  }
  compact(layout, keep, eos, options.segments);
  return layout;
}

struct Made {
  Seq2SeqExample example;
  bool source_truncated = false;
  bool target_truncated = false;
};

Made make(const Document& document, const Tokenizer& tokenizer, const TruncationOptions& options,
          std::int32_t eos) {
  Made made;
  made.example.id = document.id;
  made.example.source = make_source(document, tokenizer, options, eos, made.source_truncated);
  std::vector<std::int32_t>& target = made.example.target;
  target = tokenizer.encode(document.summary);
  made.target_truncated = target.size() > options.max_target_tokens - 1;
  if (made.target_truncated) target.resize(options.max_target_tokens - 1);
  target.push_back(eos);
  made.example.reference = document.summary;
  return made;
}

}  // namespace

TruncationPolicy truncation_policy_from_name(std::string_view name) {
  if (name == "head") return TruncationPolicy::Head;
  if (name == "section_lead") return TruncationPolicy::SectionLead;
  throw Error(fmt::format("unknown truncation policy '{}' (known: head, section_lead)", name));
}

const char* truncation_policy_name(TruncationPolicy policy) {
  return policy == TruncationPolicy::Head ? "head" : "section_lead";
}

std::vector<std::size_t> share_budget(std::span<const std::size_t> section_lengths,
                                      std::size_t budget) {
  std::vector<std::size_t> share(section_lengths.begin(), section_lengths.end());
  if (std::accumulate(share.begin(), share.end(), std::size_t{0}) <= budget) return share;
  std::vector<std::size_t> open;  // non-empty sections, shortest first
  for (std::size_t s = 0; s < share.size(); ++s)
    if (share[s] > 0) open.push_back(s);
  std::stable_sort(open.begin(), open.end(),
                   [&](std::size_t a, std::size_t b) { return share[a] < share[b]; });
  // Sections that fit in an even share of what is left keep everything.
  std::size_t first_open = 0;
  while (share[open[first_open]] <= budget / (open.size() - first_open))
    budget -= share[open[first_open++]];
  // The rest get the same level, the remainder one token each in document order.
  open.erase(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(first_open));
  std::sort(open.begin(), open.end());
  const std::size_t level = budget / open.size();
  std::size_t extra = budget % open.size();
  for (std::size_t s : open) {
    share[s] = level + (extra > 0);
    extra -= extra > 0;
  }
  return share;
}

Seq2SeqExample make_seq2seq_example(const Document& document, const Tokenizer& tokenizer,
                                    const TruncationOptions& options) {
  check(options);
  return make(document, tokenizer, options, require_eos(tokenizer, "seq2seq examples")).example;
}

std::vector<Seq2SeqExample> load_seq2seq_examples(const std::filesystem::path& jsonl,
                                                  const Tokenizer& tokenizer,
                                                  const TruncationOptions& options,
                                                  bool show_progress, Seq2SeqLoadStats* stats_out) {
  check(options);
  const std::int32_t eos = require_eos(tokenizer, "seq2seq examples");
  DatasetReader reader(jsonl);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  Seq2SeqLoadStats stats;
  std::vector<Seq2SeqExample> examples;
  std::vector<Document> batch;

  const auto tokenize_batch = [&] {
    std::vector<Made> made(batch.size());
    std::exception_ptr failure;  // an exception must not leave the parallel region
#pragma omp parallel for schedule(dynamic, 4)
    for (std::size_t i = 0; i < batch.size(); ++i) {
      try {
        made[i] = make(batch[i], tokenizer, options, eos);
      } catch (...) {
#pragma omp critical
        if (!failure) failure = std::current_exception();
      }
      progress.add();
    }
    if (failure) std::rethrow_exception(failure);
    for (Made& m : made) {
      stats.sources_truncated += m.source_truncated;
      stats.targets_truncated += m.target_truncated;
      examples.push_back(std::move(m.example));
    }
    batch.clear();
  };

  Document document;
  while (reader.next(document)) {
    ++stats.documents;
    if (document.empty() || trim(document.summary).empty()) {
      ++stats.skipped;
      progress.add();
      continue;
    }
    batch.push_back(std::move(document));
    if (batch.size() == kReadBatch) tokenize_batch();
  }
  tokenize_batch();
  progress.finish();

  if (examples.empty())
    throw error_at(jsonl, 0, "",
                   stats.documents == 0 ? "no documents"
                                        : "no document has both a body and a summary");
  if (stats.skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents with an empty body or summary",
                     jsonl.string(), stats.skipped, stats.documents));
  if (show_progress)
    std::fprintf(stderr,
                 "%s: %zu examples; %zu sources truncated to %zu tokens (%s), %zu targets to "
                 "%zu tokens\n",
                 jsonl.string().c_str(), examples.size(), stats.sources_truncated,
                 options.max_source_tokens, truncation_policy_name(options.policy),
                 stats.targets_truncated, options.max_target_tokens);
  if (stats_out) *stats_out = stats;
  return examples;
}

std::vector<std::size_t> seq2seq_costs(std::span<const Seq2SeqExample> examples) {
  std::vector<std::size_t> costs;
  costs.reserve(examples.size());
  for (const Seq2SeqExample& example : examples)
    costs.push_back(example.source.size() + example.target.size());
  return costs;
}

}  // namespace strata
