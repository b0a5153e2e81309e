#include "strata/recipes/tlm_summaries.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"
#include "strata/train/run_config.h"

namespace strata::recipes {

std::vector<TlmSummary> tlm_summaries(const LoadedModel& model, const std::filesystem::path& data,
                                      const TlmSummarizeOptions& options) {
  if (model.run.get<std::string>("data.task") != "tlm")
    throw Error((model.checkpoint / "config.json").string() + ": the model was not trained with data.task = tlm (" +
                "thesis ch. 2's formatted sequences), so it has no [SUMMARY] to continue from");
  const TlmFormat format = train::tlm_format(model.run);
  const TlmMarkers markers = tlm_markers(*model.tokenizer);
  decode::GenerationOptions generation = options.generation;
  generation.eos_id = markers.rest;  // a summary ends where the rest would begin
  // The model never saw a summary past its budget: it writes at most that, and [REST].
  generation.max_length = std::min<std::int64_t>(generation.max_length, static_cast<std::int64_t>(format.summary_tokens) + 1);
  generation.check();

  std::vector<TlmSummary> summaries;
  DatasetReader reader(data);
  Progress progress("summarize", options.limit, "docs", !options.show_progress);
  Document document;
  while (reader.next(document) && (options.limit == 0 || summaries.size() < options.limit)) {
    if (trim(document.summary).empty()) continue;
    const auto extract = options.extracts.of(document);
    const TlmPrompt prompt = tlm_prompt(tlm_parts(document, format.intro_sections), extract ? &*extract : nullptr,
                                        *model.tokenizer, format, markers);
    const at::Tensor ids = torch::tensor(std::vector<std::int64_t>(prompt.ids.begin(), prompt.ids.end())).unsqueeze(0);
    const decode::Sequences continued = continue_prompts(model, ids, generation, /*use_cache=*/true);
    std::vector<std::int32_t> written;
    for (std::int64_t token : continued.front())
      if (token != markers.rest && token != markers.eos) written.push_back(static_cast<std::int32_t>(token));
    summaries.push_back({document.id, std::string(trim(model.tokenizer->decode(written))), document.summary,
                         document.text, model.tokenizer->decode(prompt.intro), model.tokenizer->decode(prompt.extract)});
    progress.add();
  }
  progress.finish();
  if (summaries.empty()) throw Error(data.string() + ": no document with a reference summary");
  return summaries;
}

}  // namespace strata::recipes
