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
#include "strata/train/sentence_extraction_task.h"
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

// The run's selection, with what the command line gives over it.
train::ExtractiveSelection selection_of(const ExtractFlags& flags, const Config& run) {
  train::ExtractiveSelection selection = train::extractive_selection(run);
  if (flags.top_k_option->count() > 0) selection.top_k = flags.top_k;
  if (flags.trigram_blocking_option->count() > 0) selection.trigram_blocking = flags.trigram_blocking;
  if (selection.top_k == 0) throw Error("--top-k: must be at least 1");
  return selection;
}

// The first k sentences, and the oracle's, of each example: the peers of the model's extract.
template <class Example>
std::vector<std::string> lead_extracts(const std::vector<Example>& examples, std::size_t k) {
  std::vector<std::string> out;
  for (const Example& e : examples) {
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

std::string join_lines(const std::vector<std::string>& sentences) {
  std::string text;
  for (const std::string& sentence : sentences) text += (text.empty() ? "" : "\n") + sentence;
  return text;
}

// The {id, selected, prediction, reference, source} lines (--out; the source is the sentences
// the extractor read, for `strata eval copy`) and the ROUGE report (--json).
template <class Example>
void write_outputs(const ExtractFlags& flags, const std::vector<Example>& examples,
                   const std::vector<std::vector<std::size_t>>& selected, const std::vector<std::string>& predictions,
                   const std::vector<SystemReport>& systems, nlohmann::ordered_json report) {
  if (!flags.out.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < examples.size(); ++i)
      lines += nlohmann::ordered_json{{"id", examples[i].id},
                                      {"selected", selected[i]},
                                      {"prediction", predictions[i]},
                                      {"reference", examples[i].reference},
                                      {"source", join_lines(examples[i].sentences)}}
                   .dump() +
               "\n";
    write_file_atomic(flags.out, lines);
  }
  if (!flags.json.empty()) {
    for (const SystemReport& system : systems) report["systems"][system.key] = rouge_report_json(system.report);
    write_file_atomic(flags.json, report.dump(2) + "\n");
  }
  print_rouge_table(systems.front().report);
  print_peers(systems);
  if (!flags.out.empty()) std::printf("\npredictions in %s\n", flags.out.c_str());
}

RougeReport extract_rouge(const std::vector<std::string>& references, const std::vector<std::string>& extracts) {
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, /*use_stemmer=*/true);
  return rouge_report(scorer, references, extracts, BootstrapOptions{});
}

std::vector<std::string> references_of(const auto& examples) {
  std::vector<std::string> references;
  for (const auto& e : examples) references.push_back(e.reference);
  return references;
}

// Thesis ch. 2's extractors (sent_clf, sent_ptr): beside lead-k and the chapter's oracle.
void run_sentence_extract(const ExtractFlags& flags, const recipes::LoadedModel& info,
                          models::SentenceExtractor& extractor) {
  if (flags.trigram_blocking_option->count() > 0)
    throw Error("--trigram-blocking: applies to encoder extractors, not " + info.config.architecture);
  models::ExtractionOptions options = train::extraction_options(info.run);
  if (flags.top_k_option->count() > 0) options.top_k = flags.top_k;
  if (options.top_k == 0) throw Error("--top-k: must be at least 1");
  std::vector<SentenceExtractionExample> examples = load_sentence_extraction_examples(
      flags.data, *info.tokenizer, train::sentence_extraction_options(info.run), !flags.quiet);
  if (flags.limit > 0 && examples.size() > flags.limit) examples.resize(flags.limit);

  Progress progress("extract", examples.size(), "docs", flags.quiet);
  const auto selected = train::extract_sentences(extractor, examples, info.config.pad_id, options, 16, &progress);
  progress.finish();
  std::vector<std::string> predictions, oracles;
  std::size_t picked = 0;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    predictions.push_back(join_sentences(examples[i].sentences, selected[i]));
    oracles.push_back(join_sentences(examples[i].sentences, examples[i].oracle));
    picked += selected[i].size();
  }
  // Lead takes as many sentences as the model did on average.
  const std::size_t lead = std::max<std::size_t>(1, (picked + examples.size() / 2) / std::max<std::size_t>(examples.size(), 1));
  const std::vector<std::string> references = references_of(examples);
  const auto report = [&](const std::vector<std::string>& extracts) { return extract_rouge(references, extracts); };
  const bool pointer = info.config.architecture == "sent_ptr";
  const std::string label = pointer ? fmt::format("model (beam {}, <= {} picks)", options.beam_size, options.max_steps)
                                    : fmt::format("model (top-{})", options.top_k);
  const std::vector<SystemReport> systems{{"model", label, report(predictions)},
                                          {"lead", fmt::format("lead-{}", lead), report(lead_extracts(examples, lead))},
                                          {"oracle", "oracle (2 per summary sentence)", report(oracles)}};
  write_outputs(flags, examples, selected, predictions, systems,
                {{"model", info.checkpoint.string()},
                 {"data", flags.data},
                 {"count", examples.size()},
                 {"architecture", info.config.architecture},
                 {"top_k", options.top_k},
                 {"beam_size", options.beam_size},
                 {"max_steps", options.max_steps}});
}

void run_extract(const ExtractFlags& flags) {
  {
    recipes::LoadOptions load;
    load.adapter = flags.adapter;
    recipes::LoadedModel info = recipes::load_model(flags.model, load);
    if (auto* extractor = dynamic_cast<models::SentenceExtractor*>(info.module.get()))
      return run_sentence_extract(flags, info, *extractor);
  }
  recipes::LoadedModel info;
  models::EncoderModel model = recipes::load_encoder(flags.model, info, "extractive", "strata extract", flags.adapter);
  const train::ExtractiveSelection selection = selection_of(flags, info.run);
  const ExtractiveOptions options = train::extractive_options(info.run);
  std::vector<ExtractiveExample> examples =
      load_extractive_examples(flags.data, *info.tokenizer, options, !flags.quiet);
  if (flags.limit > 0 && examples.size() > flags.limit) examples.resize(flags.limit);

  Progress progress("extract", examples.size(), "docs", flags.quiet);
  const std::vector<std::vector<float>> scores = train::sentence_scores(model, examples, 8, &progress);
  progress.finish();
  const std::vector<std::string> predictions = train::extractive_summaries(examples, scores, selection);

  const std::vector<std::string> references = references_of(examples);
  const auto report = [&](const std::vector<std::string>& extracts) { return extract_rouge(references, extracts); };
  const std::string blocking = selection.trigram_blocking ? ", trigram blocking" : "";
  const std::vector<SystemReport> systems{
      {"model", fmt::format("model (top-{}{})", selection.top_k, blocking), report(predictions)},
      {"lead", fmt::format("lead-{}", selection.top_k), report(lead_extracts(examples, selection.top_k))},
      {"oracle", fmt::format("oracle (<= {} sentences)", options.oracle_sentences), report(oracle_extracts(examples))}};

  std::vector<std::vector<std::size_t>> selected;
  for (std::size_t i = 0; i < examples.size(); ++i)
    selected.push_back(select_sentences(scores[i], examples[i].sentences, selection.top_k, selection.trigram_blocking));
  write_outputs(flags, examples, selected, predictions, systems,
                {{"model", info.checkpoint.string()},
                 {"data", flags.data},
                 {"count", examples.size()},
                 {"top_k", selection.top_k},
                 {"trigram_blocking", selection.trigram_blocking},
                 {"oracle_sentences", options.oracle_sentences}});
}

}  // namespace

void register_extract(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "extract", "Extractive summaries of a JSONL dataset with a trained extractor (an extractive encoder, sent_clf "
                 "or sent_ptr), with ROUGE beside lead-k and the oracle it was trained on");
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
  sub->add_option("--out", flags->out, "write {id, selected, prediction, reference, source} JSON lines here");
  sub->add_option("--json", flags->json, "write the ROUGE of the model, lead-k and the oracle here as JSON");
  sub->add_option("--limit", flags->limit, "extract only the first N documents");
  sub->add_flag("--quiet", flags->quiet, "no progress bars");
  on_run(sub, [flags] { run_extract(*flags); });
}

}  // namespace strata::cli
