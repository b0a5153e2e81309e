#include "strata/data/denoising.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/split_mix64.h"
#include "strata/data/document_chunks.h"
#include "strata/data/parallel_documents.h"
#include "strata/doc/dataset.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

// Knuth's multiplication method: fine for the small lambdas of span lengths.
std::size_t draw_poisson(double lambda, SplitMix64& rng) {
  const double limit = std::exp(-lambda);
  std::size_t k = 0;
  for (double product = rng.uniform(); product > limit; product *= rng.uniform()) ++k;
  return k;
}

// The first `k` of a random permutation of 0..n-1, sorted.
std::vector<std::size_t> choose_sorted(std::size_t n, std::size_t k, SplitMix64& rng) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  for (std::size_t i = 0; i < k; ++i) std::swap(order[i], order[i + rng.below(n - i)]);
  order.resize(k);
  std::sort(order.begin(), order.end());
  return order;
}

template <class T>
void shuffle(std::vector<T>& items, SplitMix64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

// Gives the ids >= 0 of `ids` the same set of values, assigned in order of first appearance.
void renumber_in_order(std::vector<std::int32_t>& ids) {
  std::vector<std::int32_t> values;
  for (std::int32_t id : ids)
    if (id >= 0) values.push_back(id);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::map<std::int32_t, std::int32_t> renamed;
  std::size_t next = 0;
  for (std::int32_t& id : ids) {
    if (id < 0) continue;
    const auto [it, fresh] = renamed.emplace(id, 0);
    if (fresh) it->second = values[next++];
    id = it->second;
  }
}

// Half-open token ranges [first, second) of the sentences of layout[begin, end), in order.
std::vector<std::pair<std::size_t, std::size_t>> sentence_ranges(const Layout& layout, std::size_t begin,
                                                                 std::size_t end) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (std::size_t p = begin; p < end;) {
    if (layout.sentence[p] < 0) {
      ++p;
      continue;
    }
    std::size_t q = p;
    while (q < end && layout.sentence[q] == layout.sentence[p]) ++q;
    ranges.emplace_back(p, q);
    p = q;
  }
  return ranges;
}

class LayoutBuilder {
 public:
  explicit LayoutBuilder(const Layout& from) : from_(from) { out_.tree = from.tree; }
  // A token with the section, paragraph and sentence of from[p].
  void push(std::size_t p, std::int32_t token) {
    out_.token.push_back(token);
    out_.section.push_back(from_.section[p]);
    out_.paragraph.push_back(from_.paragraph[p]);
    out_.sentence.push_back(from_.sentence[p]);
  }
  Layout finish(int segments) {
    const std::size_t n = out_.size();
    out_.position.resize(n);
    out_.segment.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      out_.position[p] = static_cast<std::int32_t>(p);
      out_.segment[p] = even_segment(p, n, segments);
    }
    return std::move(out_);
  }

 private:
  const Layout& from_;
  Layout out_;
};

}  // namespace

void check(const DenoisingOptions& options) {
  if (!(options.mask_ratio >= 0 && options.mask_ratio <= 1))
    throw Error(fmt::format("pretrain.mask_ratio: must be in [0, 1], got {}", options.mask_ratio));
  if (!(options.poisson_lambda > 0 && options.poisson_lambda <= 100))
    throw Error(fmt::format("pretrain.poisson_lambda: must be in (0, 100], got {}", options.poisson_lambda));
}

std::vector<std::size_t> draw_span_lengths(std::size_t tokens, double lambda, SplitMix64& rng) {
  std::vector<std::size_t> lengths;
  std::size_t covered = 0;
  while (covered < tokens) {
    lengths.push_back(std::min(draw_poisson(lambda, rng), tokens - covered));
    covered += lengths.back();
  }
  return lengths;
}

Layout permute_sentences(const Layout& layout, std::uint64_t seed) {
  SplitMix64 rng(seed);
  const std::size_t n = layout.size();
  std::vector<std::size_t> order;  // for each new position, the old one
  order.reserve(n);
  for (std::size_t begin = 0; begin < n;) {
    std::size_t end = begin;
    while (end < n && layout.section[end] == layout.section[begin]) ++end;
    const auto ranges = sentence_ranges(layout, begin, end);
    auto shuffled = ranges;
    shuffle(shuffled, rng);
    // Tokens outside sentences keep their places; the k-th sentence's place takes the k-th
    // sentence of the shuffled order.
    std::size_t k = 0;
    for (std::size_t p = begin; p < end;) {
      if (layout.sentence[p] < 0) {
        order.push_back(p++);
        continue;
      }
      for (std::size_t q = shuffled[k].first; q < shuffled[k].second; ++q) order.push_back(q);
      p = ranges[k++].second;
    }
    begin = end;
  }
  Layout out = layout;
  for (std::size_t p = 0; p < n; ++p) {
    out.token[p] = layout.token[order[p]];
    out.section[p] = layout.section[order[p]];
    out.paragraph[p] = layout.paragraph[order[p]];
    out.sentence[p] = layout.sentence[order[p]];
  }
  renumber_in_order(out.paragraph);
  renumber_in_order(out.sentence);
  return out;
}

Layout infill_text(const Layout& layout, std::int32_t mask_id, double mask_ratio, double lambda, int segments,
                   std::uint64_t seed) {
  check(DenoisingOptions{mask_ratio, lambda, false});
  std::size_t text = 0;  // tokens inside a sentence: the ones that may be masked
  for (std::int32_t sentence : layout.sentence) text += sentence >= 0;
  const auto masked = static_cast<std::size_t>(std::llround(mask_ratio * static_cast<double>(text)));
  SplitMix64 rng(seed);
  std::vector<std::size_t> spans = draw_span_lengths(masked, lambda, rng);
  // One span per gap between kept text tokens (before the first, between two, after the
  // last), so spans never touch; and no more spans than masked tokens, so the source never
  // grows past its truncation. Surplus spans join the one before them.
  const std::size_t kept = text - masked;
  const std::size_t most = std::min(kept + 1, std::max<std::size_t>(masked, 1));
  while (spans.size() > most) {
    spans[spans.size() - 2] += spans.back();
    spans.pop_back();
  }
  const std::vector<std::size_t> gaps = choose_sorted(kept + 1, spans.size(), rng);

  enum : char { Keep, MaskHere, Drop };
  std::vector<char> state(text, Keep);
  std::vector<char> insert_before(text + 1, 0);  // masks of empty spans
  std::size_t j = 0, span = 0;
  for (std::size_t gap = 0; gap <= kept; ++gap) {
    if (span < gaps.size() && gaps[span] == gap) {
      const std::size_t length = spans[span++];
      if (length == 0) insert_before[j] = 1;
      for (std::size_t t = 0; t < length; ++t) state[j + t] = t == 0 ? MaskHere : Drop;
      j += length;
    }
    j += gap < kept;  // the kept token after this gap
  }

  LayoutBuilder out(layout);
  j = 0;
  for (std::size_t p = 0; p < layout.size(); ++p) {
    if (layout.sentence[p] < 0) {
      out.push(p, layout.token[p]);
      continue;
    }
    if (insert_before[j]) out.push(p, mask_id);
    if (state[j] != Drop) out.push(p, state[j] == Keep ? layout.token[p] : mask_id);
    if (++j == text && insert_before[text]) out.push(p, mask_id);
  }
  return out.finish(segments);
}

Seq2SeqExample add_noise(const Seq2SeqExample& clean, std::int32_t mask_id, const DenoisingOptions& options,
                         int segments, std::uint64_t seed) {
  Seq2SeqExample noised;
  noised.id = clean.id;
  noised.target = clean.target;
  noised.reference = clean.reference;
  SplitMix64 seeds(seed);
  const std::uint64_t permute_seed = seeds.next(), infill_seed = seeds.next();
  noised.source = infill_text(options.permute_sentences ? permute_sentences(clean.source, permute_seed) : clean.source,
                              mask_id, options.mask_ratio, options.poisson_lambda, segments, infill_seed);
  return noised;
}

std::uint64_t noise_seed(std::uint64_t seed, std::uint64_t epoch, std::size_t example) {
  return SplitMix64({seed, epoch, static_cast<std::uint64_t>(example)}).next();
}

namespace {

// `example` as denoising trains it: its target the clean source, eos included.
Seq2SeqExample with_clean_target(Seq2SeqExample example, const Tokenizer& tokenizer) {
  example.target = example.source.token;
  example.reference = tokenizer.decode(std::span(example.target).first(example.target.size() - 1));
  return example;
}

}  // namespace

std::vector<Seq2SeqExample> load_denoising_examples(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                                    const TruncationOptions& truncation, bool show_progress) {
  const auto make = [&](const Document& document) {
    return with_clean_target(make_seq2seq_example(document, tokenizer, truncation), tokenizer);
  };
  DatasetReader reader(jsonl);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  std::vector<Seq2SeqExample> examples;
  std::vector<Document> batch;
  std::size_t documents = 0, skipped = 0;
  const auto make_batch = [&] {
    for (Seq2SeqExample& example : make_in_parallel<Seq2SeqExample>(batch, progress, make))
      examples.push_back(std::move(example));
    batch.clear();
  };
  Document document;
  while (reader.next(document)) {
    ++documents;
    if (document.empty()) {
      ++skipped;
      progress.add();
      continue;
    }
    batch.push_back(std::move(document));
    if (batch.size() == kDocumentBatch) make_batch();
  }
  make_batch();
  progress.finish();
  if (examples.empty()) throw error_at(jsonl, 0, "", documents == 0 ? "no documents" : "no document has a body");
  if (skipped > 0) warn(fmt::format("{}: skipped {} of {} documents with an empty body", jsonl.string(), skipped, documents));
  return examples;
}

std::vector<Seq2SeqExample> load_denoising_chunks(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                                  const TruncationOptions& truncation, bool show_progress) {
  std::vector<Seq2SeqExample> chunks;
  for (Seq2SeqExample& document : load_denoising_examples(jsonl, tokenizer, reading_whole(truncation), show_progress)) {
    const std::int32_t eos = document.source.token.back();
    std::size_t part = 0;
    for (Layout& chunk : cut_into_chunks(without_eos(std::move(document.source)), truncation.max_source_tokens,
                                         std::nullopt, eos, truncation.segments)) {
      Seq2SeqExample example;
      example.id = fmt::format("{}#{}", document.id, ++part);
      example.source = std::move(chunk);
      chunks.push_back(with_clean_target(std::move(example), tokenizer));
    }
  }
  return chunks;
}

}  // namespace strata
