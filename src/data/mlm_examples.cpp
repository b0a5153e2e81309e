#include "strata/data/mlm_examples.h"

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/data/denoising.h"
#include "strata/data/document_chunks.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

void check_chunk_length(std::size_t max_tokens) {
  if (max_tokens < 3)
    throw Error(fmt::format("data.max_source_tokens: masked-LM chunks hold [CLS], at least one token and [SEP], so "
                            "at least 3 tokens; got {}", max_tokens));
}

}  // namespace

std::vector<Layout> load_mlm_chunks(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                    const TruncationOptions& options, bool show_progress) {
  check_chunk_length(options.max_source_tokens);
  const std::optional<std::int32_t> cls = tokenizer.bos_id();
  const std::optional<std::int32_t> sep = tokenizer.sep_id() ? tokenizer.sep_id() : tokenizer.eos_id();
  if (!cls || !sep)
    throw Error(fmt::format("masked-LM chunks: [CLS] is the tokenizer's bos token and [SEP] its sep (or eos) token; "
                            "this {} tokenizer lacks {}", tokenizer.kind(), !cls ? "bos" : "both sep and eos"));
  std::vector<Layout> chunks;
  for (Seq2SeqExample& document : load_denoising_examples(jsonl, tokenizer, reading_whole(options), show_progress))
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
