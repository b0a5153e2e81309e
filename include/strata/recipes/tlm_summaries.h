#pragma once
// Summaries from a Transformer LM trained on thesis ch. 2's formatted sequences (data.task =
// tlm): each document's prompt [INTRO] intro [EXTRACT] extract [SUMMARY], formatted with the
// budgets the model was trained with, continued until [REST]. The chapter decodes by top-k
// sampling (k 30, temperature 0.7) and averages over seeds; the caller's options choose.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/data/tlm_examples.h"
#include "strata/decode/generation_options.h"
#include "strata/recipes/loaded_model.h"

namespace strata::recipes {

struct TlmSummary {
  std::string id;
  std::string prediction, reference;
  std::string source;           // the whole document
  std::string intro, extract;   // what the model read of each, as it read them (cut to budget)
};

struct TlmSummarizeOptions {
  TlmExtracts extracts;                   // the extract block's source: gold, none or a model's
  decode::GenerationOptions generation;   // max_length at most the run's tlm.summary_tokens + 1
  std::size_t limit = 0;                  // 0 = every document with a summary
  bool show_progress = true;
};

// One summary per document of `data` that has a reference; strata::Error unless `model` is a
// language model trained with data.task = tlm (its checkpoint names the file).
std::vector<TlmSummary> tlm_summaries(const LoadedModel& model, const std::filesystem::path& data,
                                      const TlmSummarizeOptions& options);

}  // namespace strata::recipes
