#pragma once
// Summaries of many documents with a seq2seq model: sources batched by length under a token
// budget (to waste little on padding), decoded with the generation options, detokenized,
// and returned in input order.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/decode/generation_options.h"
#include "strata/models/seq2seq.h"

namespace strata {
class Progress;
class Tokenizer;
}  // namespace strata

namespace strata::decode {

struct SummarizeOptions {
  GenerationOptions generation;
  std::size_t max_source_tokens_per_batch = 8192;  // rows × longest source
  bool use_cache = true;
};

// The model is put in eval mode for the call and restored after. `progress`, when given,
// advances by one per document.
std::vector<std::string> summarize(models::Seq2Seq& model, const Tokenizer& tokenizer,
                                   std::span<const Seq2SeqExample> examples,
                                   const SummarizeOptions& options, Progress* progress = nullptr);

// The generation options' token ids from the model's config (start = decoder_start_id).
GenerationOptions with_model_tokens(GenerationOptions options, const models::ModelConfig& config);

}  // namespace strata::decode
