// strata summarize: summaries of documents with a trained seq2seq model.
// strata eval summarize: decode a test set and report ROUGE with bootstrap intervals.
#include <torch/torch.h>

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "generation_flags.h"
#include "rouge_report.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/decode/summarize.h"
#include "strata/doc/dataset.h"
#include "strata/doc/parse.h"
#include "strata/eval/qs_hierarchy.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/run_config.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;

// The truncation the model was trained with, so inputs are cut the same way.
TruncationOptions truncation_of(const recipes::LoadedModel& model) {
  return train::data_options(model.run).truncation;
}

// Documents of the input: every line of a JSONL dataset, or one Markdown / man / plain text
// document, the format detected by name, then content.
std::vector<Document> read_inputs(const fs::path& path) {
  std::vector<Document> documents;
  const DocFormat format = detect_format(path, read_maybe_gzip(path));
  if (format == DocFormat::Jsonl) {
    DatasetReader reader(path);
    Document d;
    while (reader.next(d)) documents.push_back(std::move(d));
  } else {
    documents.push_back(read_document(path, format));
  }
  if (documents.empty()) throw Error(path.string() + ": no documents to summarize");
  return documents;
}

// "-": standard input, through a temporary file so that detection and parsing are the same.
std::vector<Document> read_inputs(const std::string& input) {
  if (input != "-") return read_inputs(fs::path(input));
  const fs::path temp = fs::temp_directory_path() / ("strata-stdin-" + std::to_string(::getpid()));
  write_file_atomic(temp, std::string(std::istreambuf_iterator<char>(std::cin), {}));
  std::vector<Document> documents;
  try {
    documents = read_inputs(temp);
  } catch (...) {
    fs::remove(temp);
    throw;
  }
  fs::remove(temp);
  for (Document& d : documents)
    if (d.id == temp.filename().string()) d.id = "stdin";
  return documents;
}

std::vector<Seq2SeqExample> examples_of(const std::vector<Document>& documents, const Tokenizer& tokenizer,
                                        const TruncationOptions& truncation) {
  std::vector<Seq2SeqExample> examples;
  examples.reserve(documents.size());
  for (const Document& d : documents) {
    if (d.empty()) throw Error(d.id + ": the document has no text to summarize");
    examples.push_back(make_source_example(d, tokenizer, truncation));
  }
  return examples;
}

// A trained summariser with the decoding options the flags and its run ask for.
struct Summarizer {
  recipes::LoadedModel info;
  models::Seq2Seq model{nullptr};
  decode::SummarizeOptions options;

  Summarizer(const std::string& path, const std::string& adapter, const GenerationFlags& flags)
      : model(recipes::load_seq2seq(path, info, adapter)) {
    options.generation = generation_for(flags, info);
    options.use_cache = !flags.no_cache;
  }
  std::vector<std::string> run(std::span<const Seq2SeqExample> examples, bool quiet) {
    Progress progress("summarize", examples.size(), "docs", quiet);
    std::vector<std::string> summaries = decode::summarize(model, *info.tokenizer, examples, options, &progress);
    progress.finish();
    return summaries;
  }
};

struct SummarizeFlags {
  std::string model;
  std::string adapter;  // an adapter file to load onto --model
  std::string input = "-";
  std::string out;
  std::shared_ptr<GenerationFlags> generation;
};

void run_summarize(const SummarizeFlags& flags) {
  Summarizer summarizer(flags.model, flags.adapter, *flags.generation);
  const std::vector<Document> documents = read_inputs(flags.input);
  const std::vector<Seq2SeqExample> examples =
      examples_of(documents, *summarizer.info.tokenizer, truncation_of(summarizer.info));
  const std::vector<std::string> summaries = summarizer.run(examples, examples.size() < 20);
  if (flags.out.empty() && documents.size() == 1) {
    std::printf("%s\n", summaries[0].c_str());
    return;
  }
  std::string lines;
  for (std::size_t i = 0; i < summaries.size(); ++i)
    lines += nlohmann::json{{"id", documents[i].id}, {"prediction", summaries[i]}}.dump() + "\n";
  if (flags.out.empty()) {
    std::fputs(lines.c_str(), stdout);
  } else {
    write_file_atomic(flags.out, lines);
  }
}

struct EvalFlags {
  std::string model;
  std::string adapter;  // an adapter file to load onto --model
  std::string data;
  std::string out;
  std::size_t limit = 0;
  std::size_t examples = 3;
  std::shared_ptr<GenerationFlags> generation;
};

// Task I's outputs read back into trees by the robust parser: one {id, hierarchy, repaired}
// line per sample, the root's question empty (it was the prompt).
void write_parsed_hierarchies(const fs::path& path, const std::vector<Seq2SeqExample>& examples,
                              const std::vector<std::string>& predictions) {
  std::string lines;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    QsParseRepairs repairs;
    const QsHierarchy hierarchy = parse_hierarchy(predictions[i], {}, &repairs);
    lines += nlohmann::ordered_json{{"id", examples[i].id},
                                    {"hierarchy", hierarchy_json(hierarchy)},
                                    {"repaired", repairs.any()}}
                 .dump() +
             "\n";
  }
  write_file_atomic(path, lines);
}

void run_eval_summarize(const EvalFlags& flags) {
  Summarizer summarizer(flags.model, flags.adapter, *flags.generation);
  const recipes::LoadedModel& info = summarizer.info;
  std::vector<Seq2SeqExample> examples = train::load_seq2seq_data(flags.data, *info.tokenizer, info.run, true);
  if (flags.limit > 0 && examples.size() > flags.limit) examples.resize(flags.limit);
  const std::vector<std::string> predictions = summarizer.run(examples, false);

  std::vector<std::string> references;
  for (const Seq2SeqExample& e : examples) references.push_back(e.reference);
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL", "rougeLsum"}, /*use_stemmer=*/true);
  const RougeReport report = rouge_report(scorer, references, predictions, BootstrapOptions{});

  const fs::path out = flags.out.empty() ? info.checkpoint / ("eval-" + fs::path(flags.data).stem().string()) : fs::path(flags.out);
  fs::create_directories(out);
  std::string lines;
  for (std::size_t i = 0; i < examples.size(); ++i)
    lines += nlohmann::ordered_json{{"id", examples[i].id}, {"prediction", predictions[i]}, {"reference", references[i]}}.dump() + "\n";
  write_file_atomic(out / "predictions.jsonl", lines);
  nlohmann::ordered_json summary = rouge_report_json(report);
  summary["model"] = info.checkpoint.string();
  summary["data"] = flags.data;
  summary["beam_size"] = summarizer.options.generation.beam_size;
  write_file_atomic(out / "rouge.json", summary.dump(2) + "\n");

  const bool hierarchies =
      info.run.get<std::string>("data.task") == "qs_hierarchy" && info.run.get<std::string>("data.qs_task") == "hierarchy";
  if (hierarchies) write_parsed_hierarchies(out / "hierarchies.jsonl", examples, predictions);
  print_rouge_table(report);
  for (std::size_t i = 0; i < std::min(flags.examples, examples.size()); ++i)
    std::printf("\n[%s]\n  reference:  %s\n  prediction: %s\n", examples[i].id.c_str(), references[i].c_str(),
                predictions[i].c_str());
  std::printf("\npredictions and scores in %s\n", out.string().c_str());
  if (hierarchies)
    std::printf("the outputs as trees (robust parser) in %s; hierarchy F1 and question BLEU: strata eval "
                "hierarchy --pairs %s\n",
                (out / "hierarchies.jsonl").string().c_str(), (out / "predictions.jsonl").string().c_str());
}

void add_adapter_option(CLI::App* sub, std::string& adapter) {
  sub->add_option("--adapter", adapter,
                  "an adapter file (RUN/adapter.safetensors of a run with an adapter: LoRA, bottleneck, prefix-tuning "
                  "or PALs) to load onto --model, its base")
      ->check(CLI::ExistingFile);
}

}  // namespace

void register_summarize(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("summarize", "Summarize documents (Markdown, man, plain text or JSONL) with a trained model");
  auto flags = std::make_shared<SummarizeFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  add_adapter_option(sub, flags->adapter);
  sub->add_option("--input", flags->input, "a document or a JSONL dataset; - reads standard input")->capture_default_str();
  sub->add_option("--out", flags->out, "write {id, prediction} JSON lines here instead of standard output");
  flags->generation = add_generation_flags(sub);
  on_run(sub, [flags] { run_summarize(*flags); });
}

void register_eval_summarize(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand("summarize", "Decode a test set with a model and report ROUGE with bootstrap intervals");
  auto flags = std::make_shared<EvalFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  add_adapter_option(sub, flags->adapter);
  sub->add_option("--data", flags->data, "JSONL dataset with reference summaries")->required();
  sub->add_option("--out", flags->out, "directory for predictions.jsonl and rouge.json (default: beside the checkpoint)");
  sub->add_option("--limit", flags->limit, "score only the first N documents");
  sub->add_option("--show", flags->examples, "example summaries to print")->capture_default_str();
  flags->generation = add_generation_flags(sub);
  on_run(sub, [flags] { run_eval_summarize(*flags); });
}

}  // namespace strata::cli
