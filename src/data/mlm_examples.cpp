#include "strata/data/mlm_examples.h"

#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/data/denoising.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

// The body of a denoising source: every token but its closing eos.
Layout without_eos(Layout source) {
  for (auto* ids : {&source.token, &source.position, &source.section, &source.paragraph, &source.sentence,
                    &source.segment})
    ids->pop_back();
  return source;
}

void check_chunk_length(std::size_t max_tokens) {
  if (max_tokens < 3)
    throw Error(fmt::format("data.max_source_tokens: masked-LM chunks hold [CLS], at least one token and [SEP], so "
                            "at least 3 tokens; got {}", max_tokens));
}

}  // namespace

std::vector<Layout> cut_into_chunks(const Layout& text, std::size_t max_tokens, std::int32_t cls, std::int32_t sep,
                                    int segments) {
  check_chunk_length(max_tokens);
  const std::size_t n = text.size(), room = max_tokens - 2;
  const std::size_t count = (n + room - 1) / room;
  std::vector<Layout> chunks(count);
  for (std::size_t c = 0; c < count; ++c) {
    Layout& out = chunks[c];
    const auto push = [&](std::int32_t token, std::int32_t section, std::int32_t paragraph, std::int32_t sentence) {
      out.token.push_back(token);
      out.section.push_back(section);
      out.paragraph.push_back(paragraph);
      out.sentence.push_back(sentence);
    };
    push(cls, 0, -1, -1);
    for (std::size_t i = c * n / count; i < (c + 1) * n / count; ++i)
      push(text.token[i], text.section[i], text.paragraph[i], text.sentence[i]);
    push(sep, 0, -1, -1);
    for (std::size_t p = 0; p < out.size(); ++p) {
      out.position.push_back(static_cast<std::int32_t>(p));
      out.segment.push_back(even_segment(p, out.size(), segments));
    }
    out.tree = text.tree;
  }
  return chunks;
}

std::vector<Layout> load_mlm_chunks(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                    const TruncationOptions& options, bool show_progress) {
  check_chunk_length(options.max_source_tokens);
  const std::optional<std::int32_t> cls = tokenizer.bos_id();
  const std::optional<std::int32_t> sep = tokenizer.sep_id() ? tokenizer.sep_id() : tokenizer.eos_id();
  if (!cls || !sep)
    throw Error(fmt::format("masked-LM chunks: [CLS] is the tokenizer's bos token and [SEP] its sep (or eos) token; "
                            "this {} tokenizer lacks {}", tokenizer.kind(), !cls ? "bos" : "both sep and eos"));
  TruncationOptions whole = options;  // the documents whole: the chunks cut them
  whole.max_source_tokens = std::numeric_limits<std::size_t>::max();
  whole.policy = TruncationPolicy::Head;
  std::vector<Layout> chunks;
  for (Seq2SeqExample& document : load_denoising_examples(jsonl, tokenizer, whole, show_progress))
    for (Layout& chunk : cut_into_chunks(without_eos(std::move(document.source)), options.max_source_tokens, *cls,
                                         *sep, options.segments))
      chunks.push_back(std::move(chunk));
  return chunks;
}

std::vector<std::size_t> chunk_costs(std::span<const Layout> chunks) {
  std::vector<std::size_t> costs;
  costs.reserve(chunks.size());
  for (const Layout& chunk : chunks) costs.push_back(chunk.size());
  return costs;
}

}  // namespace strata
