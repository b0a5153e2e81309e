// strata extract: extractive summaries (BERTSum, seed 003 §4.1) of a dataset with a trained
// encoder, scored with ROUGE beside two extracts of the same sentences: lead-k (the first k)
// and the greedy oracle the model was trained to imitate (an upper bound: it reads the reference).
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "rouge_report.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/data/extractive_examples.h"
#include "strata/train/checkpoint.h"
#include "strata/train/extractive_task.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/run_config.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;

// The encoder of a run or checkpoint directory, as recipes/loaded_model.h loads the other architectures.
struct ExtractFlags {
  std::string model;
  std::string adapter;
  std::string data;
  std::size_t top_k = 0;
  bool trigram_blocking = false;
  std::string out;
  std::string json;
  std::size_t limit = 0;
  bool quiet = false;
  // Given on the command line? Otherwise the run's extract.* settings apply.
  CLI::Option* top_k_option = nullptr;
  CLI::Option* trigram_blocking_option = nullptr;
};

train::ExtractiveSelection selection_of(const ExtractFlags& flags, const Config& run) {
  train::ExtractiveSelection selection;
  selection.top_k = flags.top_k_option->count() > 0 ? flags.top_k
                                                    : static_cast<std::size_t>(run.get<std::int64_t>("extract.top_k"));
  selection.trigram_blocking =
      flags.trigram_blocking_option->count() > 0 ? flags.trigram_blocking : run.get<bool>("extract.trigram_blocking");
  if (selection.top_k == 0) throw Error("--top-k: must be at least 1");
  return selection;
}

ExtractiveOptions options_of(const Config& run) {
  ExtractiveOptions options;
  options.max_tokens = static_cast<std::size_t>(run.get<std::int64_t>("data.max_source_tokens"));
  options.oracle_sentences = static_cast<std::size_t>(run.get<std::int64_t>("extract.oracle_sentences"));
  return options;
}

// The first k sentences, and the oracle's, of each example: the peers of the model's extract.
std::vector<std::string> lead_extracts(const std::vector<ExtractiveExample>& examples, std::size_t k) {
  std::vector<std::string> out;
  for (const ExtractiveExample& e : examples) {
    std::vector<std::size_t> first(std::min(k, e.sentences.size()));
    for (std::size_t i = 0; i < first.size(); ++i) first[i] = i;
    out.push_back(join_sentences(e.sentences, first));
  }
  return out;
}

std::vector<std::string> oracle_extracts(const std::vector<ExtractiveExample>& examples) {
  std::vector<std::string> out;
  for (const ExtractiveExample& e : examples) {
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < e.labels.size(); ++i)
      if (e.labels[i]) chosen.push_back(i);
    out.push_back(join_sentences(e.sentences, chosen));
  }
  return out;
}

struct SystemReport {
  std::string key;    // in the JSON report
  std::string label;  // in the table
  RougeReport report;
};

void print_peers(const std::vector<SystemReport>& systems) {
  std::printf("\nROUGE F (mean) of the model's extract and its peers on the same sentences:\n");
  std::printf("%-28s", "system");
  for (const auto& [name, aggregate] : systems.front().report.aggregates) std::printf(" %8s", name.c_str());
  std::printf("\n");
  for (const SystemReport& system : systems) {
    std::printf("%-28s", system.label.c_str());
    for (const auto& [name, aggregate] : system.report.aggregates) std::printf(" %8.5f", aggregate.fmeasure.mean);
    std::printf("\n");
  }
}

void run_extract(const ExtractFlags& flags) {
  recipes::LoadedModel info;
  models::EncoderModel model = recipes::load_encoder(flags.model, info, "extractive", "strata extract", flags.adapter);
  const train::ExtractiveSelection selection = selection_of(flags, info.run);
  const ExtractiveOptions options = options_of(info.run);
  std::vector<ExtractiveExample> examples =
      load_extractive_examples(flags.data, *info.tokenizer, options, !flags.quiet);
  if (flags.limit > 0 && examples.size() > flags.limit) examples.resize(flags.limit);

  Progress progress("extract", examples.size(), "docs", flags.quiet);
  const std::vector<std::vector<float>> scores = train::sentence_scores(model, examples, 8, &progress);
  progress.finish();
  const std::vector<std::string> predictions = train::extractive_summaries(examples, scores, selection);

  std::vector<std::string> references;
  for (const ExtractiveExample& e : examples) references.push_back(e.reference);
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, /*use_stemmer=*/true);
  const auto report = [&](const std::vector<std::string>& extracts) {
    return rouge_report(scorer, references, extracts, BootstrapOptions{});
  };
  const std::string blocking = selection.trigram_blocking ? ", trigram blocking" : "";
  const std::vector<SystemReport> systems{
      {"model", fmt::format("model (top-{}{})", selection.top_k, blocking), report(predictions)},
      {"lead", fmt::format("lead-{}", selection.top_k), report(lead_extracts(examples, selection.top_k))},
      {"oracle", fmt::format("oracle (<= {} sentences)", options.oracle_sentences), report(oracle_extracts(examples))}};

  if (!flags.out.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < examples.size(); ++i) {
      const std::vector<std::size_t> selected =
          select_sentences(scores[i], examples[i].sentences, selection.top_k, selection.trigram_blocking);
      lines += nlohmann::ordered_json{{"id", examples[i].id},
                                      {"selected", selected},
                                      {"prediction", predictions[i]},
                                      {"reference", references[i]}}
                   .dump() +
               "\n";
    }
    write_file_atomic(flags.out, lines);
  }
  if (!flags.json.empty()) {
    nlohmann::ordered_json json = {{"model", info.checkpoint.string()},
                                   {"data", flags.data},
                                   {"count", examples.size()},
                                   {"top_k", selection.top_k},
                                   {"trigram_blocking", selection.trigram_blocking},
                                   {"oracle_sentences", options.oracle_sentences}};
    for (const SystemReport& system : systems) json["systems"][system.key] = rouge_report_json(system.report);
    write_file_atomic(flags.json, json.dump(2) + "\n");
  }

  print_rouge_table(systems.front().report);
  print_peers(systems);
  if (!flags.out.empty()) std::printf("\npredictions in %s\n", flags.out.c_str());
}

}  // namespace

void register_extract(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "extract", "Extractive summaries of a JSONL dataset with a trained extractive encoder, with ROUGE beside lead-k "
                 "and the oracle");
  auto flags = std::make_shared<ExtractFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter,
                  "an adapter file (RUN/adapter.safetensors of a run with --adapter) to load onto --model, its base");
  sub->add_option("--data", flags->data, "JSONL dataset with reference summaries")->required();
  flags->top_k_option =
      sub->add_option("--top-k", flags->top_k, "sentences selected per document (default: the run's extract.top_k)");
  flags->trigram_blocking_option =
      sub->add_flag("--trigram-blocking,!--no-trigram-blocking", flags->trigram_blocking,
                    "skip a sentence that shares a word trigram with one already selected (default: the run's "
                    "extract.trigram_blocking)");
  sub->add_option("--out", flags->out, "write {id, selected, prediction, reference} JSON lines here");
  sub->add_option("--json", flags->json, "write the ROUGE of the model, lead-k and the oracle here as JSON");
  sub->add_option("--limit", flags->limit, "extract only the first N documents");
  sub->add_flag("--quiet", flags->quiet, "no progress bars");
  on_run(sub, [flags] { run_extract(*flags); });
}

}  // namespace strata::cli
