// strata lm summarize: thesis ch. 2's TLM summaries (a causal_lm trained with data.task = tlm)
// as {id, prediction, reference, source, extract, context} lines, which `strata eval rouge
// --pairs` scores and `strata eval copy --attribute` reads.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "generation_flags.h"
#include "strata/core/files.h"
#include "strata/decode/summarize.h"
#include "strata/recipes/tlm_summaries.h"

namespace strata::cli {

namespace {

struct LmSummarizeFlags {
  std::string model, adapter, data, extracts, out;
  std::size_t limit = 0;
  bool quiet = false;
};

void run_lm_summarize(const LmSummarizeFlags& flags, const GenerationFlags& generation) {
  recipes::LoadOptions load;
  load.adapter = flags.adapter;
  const recipes::LoadedModel model = recipes::load_model(flags.model, load);
  recipes::TlmSummarizeOptions options;
  options.extracts = TlmExtracts::parse(flags.extracts);
  options.generation = decode::with_model_tokens(generation_for(generation, model), model.config);
  options.limit = flags.limit;
  options.show_progress = !flags.quiet;
  std::string lines;
  const std::vector<recipes::TlmSummary> summaries = recipes::tlm_summaries(model, flags.data, options);
  for (const recipes::TlmSummary& s : summaries)
    lines += nlohmann::ordered_json{{"id", s.id},           {"prediction", s.prediction}, {"reference", s.reference},
                                    {"source", s.source},   {"extract", s.extract},       {"context", s.intro}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             "\n";
  write_file_atomic(flags.out, lines);
  std::printf("wrote %zu summaries to %s\n", summaries.size(), flags.out.c_str());
}

}  // namespace

void register_lm_summarize(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand(
      "summarize", "Summaries from a TLM (thesis ch. 2: a causal_lm trained with data.task = tlm), as JSONL pairs");
  sub->footer(
      "Each document's prompt is [INTRO] intro [EXTRACT] extract [SUMMARY], cut to the budgets the model was trained "
      "with (tlm.*); the model writes until [REST]. --extracts chooses the extract block: gold (the chapter's oracle, "
      "which reads the reference: (G,G) is an upper bound, never a result), none (a model trained without extracts: "
      "TLM, TLM-I) or a JSONL file of {id, prediction} lines from an extractor (`strata extract --out`): (G,M) or "
      "(M,M) by how the model was trained. Decoding follows the run's [decode] section unless flags override it; the "
      "thesis samples (--sample --top-k 30 --temperature 0.7) and averages over seeds (--seed).");
  auto flags = std::make_shared<LmSummarizeFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter, "an adapter file to load onto --model, its base")->check(CLI::ExistingFile);
  sub->add_option("--data", flags->data, "JSONL dataset with reference summaries")->required();
  sub->add_option("--extracts", flags->extracts, "gold, none, or an extracts JSONL file")->required();
  sub->add_option("--out", flags->out, "write {id, prediction, reference, source, extract, context} lines here")
      ->required();
  sub->add_option("--limit", flags->limit, "summarise only the first N documents with a reference");
  sub->add_flag("--quiet", flags->quiet, "no progress bar");
  const std::shared_ptr<GenerationFlags> generation = add_generation_flags(sub);
  on_run(sub, [flags, generation] { run_lm_summarize(*flags, *generation); });
}

}  // namespace strata::cli
