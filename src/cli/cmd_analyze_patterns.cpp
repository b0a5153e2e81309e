// strata analyze patterns: how much of each encoder self-attention head's weight follows an
// interpretable pattern (seed 003 §3.1.3 Eq. 1, §4.2.2): the global relevance of every
// pattern for every head over validation data, the 3-sigma rule that keeps a pattern, and the
// top heads, as JSON, one heatmap per pattern (Figure 2 C) and a printed summary.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "heatmap_figure.h"
#include "strata/analysis/global_relevance.h"
#include "strata/attn/patterns.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/models/model_config.h"
#include "strata/text/tokenizer.h"
#include "strata/train/checkpoint.h"
#include "strata/train/model_dir.h"
#include "strata/train/run_config.h"
#include "training_tasks.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct PatternsOptions {
  std::string model, data, out, definitions;
  std::string patterns = "matching_token,intra_sentence,previous_token,next_token";
  std::size_t top = 5, max_examples = 0, max_tokens = 4096;
  bool quiet = false;
};

// --definitions: a JSON object given inline, or the path of a file holding one.
nlohmann::json read_definitions(const std::string& text) {
  const bool inline_json = text.find_first_not_of(" \t\n") != std::string::npos &&
                           text[text.find_first_not_of(" \t\n")] == '{';
  const std::string source = inline_json ? std::string("--definitions") : text;
  const std::string json_text = inline_json ? text : read_file(text);
  try {
    return nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(source + ": not JSON: " + e.what());
  }
}

std::string head_label(const analysis::GlobalRelevance& gr, const analysis::RankedHead& head) {
  return fmt::format("{} head {}", gr.layers.at(head.layer), head.head + 1);
}

void print_summary(const analysis::GlobalRelevance& gr) {
  std::size_t width = 7;
  for (const analysis::PatternRelevance& p : gr.patterns) width = std::max(width, p.pattern.size());
  fmt::print("{:<{}}  {:>7}  {:>7}  {:>9}  {:<8}  best head\n", "pattern", width, "mean", "std", "mean+3std",
             "3-sigma");
  for (const analysis::PatternRelevance& p : gr.patterns) {
    const std::string best = p.top.empty() ? std::string("-")
                                           : fmt::format("{:.4f} ({})", p.top[0].value, head_label(gr, p.top[0]));
    fmt::print("{:<{}}  {:>7.4f}  {:>7.4f}  {:>9.4f}  {:<8}  {}\n", p.pattern, width, p.mean, p.std,
               p.mean + 3 * p.std, p.kept ? "kept" : "not kept", best);
  }
  for (const analysis::PatternRelevance& p : gr.patterns) {
    std::string list;
    for (const analysis::RankedHead& head : p.top)
      list += fmt::format("{}{} {:.4f}", list.empty() ? "" : ", ", head_label(gr, head), head.value);
    fmt::print("top heads of {}: {}\n", p.pattern, list);
  }
}

void analyze_patterns(const PatternsOptions& options) {
  attn::PatternSet known;
  const nlohmann::json definitions =
      options.definitions.empty() ? nlohmann::json() : read_definitions(options.definitions);
  if (!definitions.is_null()) known.define(definitions);
  const std::vector<attn::Pattern> patterns = known.parse_list(options.patterns);
  if (patterns.empty())
    throw Error(fmt::format("--patterns: no pattern named; known patterns: {}", fmt::join(known.names(), ", ")));

  TrainedTask loaded = load_trained_task(options.model, options.data, options.quiet);
  torch::nn::Module& model = loaded.task->model();
  const std::vector<analysis::NamedAttention> layers = analysis::encoder_self_attention(model);
  auto* source = dynamic_cast<analysis::AnalysisBatchSource*>(loaded.task.get());
  if (source == nullptr)
    throw Error(fmt::format("model {}: its kind of training task cannot hand its batches to the pattern analysis yet",
                            options.model));

  analysis::RelevanceOptions relevance_options;
  relevance_options.max_examples = options.max_examples;
  relevance_options.max_tokens = options.max_tokens;
  relevance_options.top = options.top;
  relevance_options.token_classes = analysis::token_class_table(*loaded.tokenizer);
  const std::vector<std::size_t>& costs = loaded.task->costs(train::Split::Valid);
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, costs.size()) : costs.size();
  Progress progress("global relevance", examples, "examples", options.quiet);
  relevance_options.progress = &progress;
  const analysis::GlobalRelevance gr =
      analysis::global_relevance(model, *source, costs, layers, patterns, relevance_options);
  progress.finish();

  const fs::path out = options.out.empty() ? fs::path(options.model) / "patterns" : fs::path(options.out);
  fs::create_directories(out);
  Json report;
  report["model"] = loaded.checkpoint.string();
  report["data"] = options.data;
  const Json body = analysis::to_json(gr);  // named: items() of a temporary would dangle
  for (const auto& [key, value] : body.items()) report[key] = value;
  std::vector<std::string> written;
  for (std::size_t p = 0; p < gr.patterns.size(); ++p) {
    const analysis::PatternRelevance& relevance = gr.patterns[p];
    Heatmap figure;
    figure.title = fmt::format("Global relevance of {} (seed 003 Eq. 1), {} validation examples", relevance.pattern,
                               gr.examples);
    figure.rows = gr.layers;
    figure.values = relevance.matrix;
    figure.legend = fmt::format("share of each head's attention on pairs where {} holds; framed: above mean + 3 std "
                                "({:.4f})",
                                relevance.pattern, relevance.mean + 3 * relevance.std);
    for (std::size_t l = 0; l < relevance.matrix.size(); ++l)
      for (std::size_t h = 0; h < relevance.matrix[l].size(); ++h)
        if (relevance.std > 0 && relevance.matrix[l][h] > relevance.mean + 3 * relevance.std)
          figure.outlined.insert({l, h});
    write_file_atomic(out / (relevance.pattern + ".svg"), heatmap_svg(figure));
    write_file_atomic(out / (relevance.pattern + ".png"), heatmap_png(figure));
    report["patterns"][p]["files"] = Json::array({relevance.pattern + ".svg", relevance.pattern + ".png"});
    written.push_back(relevance.pattern + ".svg");
    written.push_back(relevance.pattern + ".png");
  }
  if (!definitions.is_null()) report["definitions"] = definitions;
  write_file_atomic(out / "relevance.json", report.dump(2) + "\n");
  written.insert(written.begin(), "relevance.json");

  fmt::print("global relevance over {} validation examples, {} encoder self-attention layers × {} heads\n",
             gr.examples, gr.layers.size(), gr.patterns.front().matrix.front().size());
  print_summary(gr);
  fmt::print("wrote {}: {}\n", out.string(), fmt::join(written, ", "));
}

}  // namespace

void register_analyze_patterns(CLI::App& analyze) {
  CLI::App* patterns = analyze.add_subcommand(
      "patterns",
      "Measure how much of each encoder self-attention head's weight follows interpretable patterns "
      "(seed 003 §3.1.3): the global relevance GR(P, h), the mean over validation examples of the "
      "weight on pairs (i, j) where P holds, per query. A pattern is kept when some head lies more than "
      "3 standard deviations above the mean over all heads (§4.2.2; possible only with 11 heads or more). "
      "Built-in patterns: matching_token, intra_sentence, intra_context, previous_token, next_token, "
      "special_token, punctuation; --definitions composes them with & | ! and parentheses. Writes "
      "OUT/relevance.json (per pattern: matrix[layer][head], mean, std, threshold, kept, top heads; heads "
      "from 0), PATTERN.svg and PATTERN.png (layers × heads, the first layer on top, heads from 1) and "
      "prints a summary.");
  auto options = std::make_shared<PatternsOptions>();
  patterns
      ->add_option("--model", options->model, "a run directory or checkpoint of `strata train` (seq2seq or encoder)")
      ->required();
  patterns->add_option("--data", options->data, "validation data (JSONL, as the model was trained on)")->required();
  patterns->add_option("--out", options->out, "output directory (default: MODEL/patterns)");
  patterns->add_option("--patterns", options->patterns, "comma-separated pattern names")->capture_default_str();
  patterns->add_option("--definitions", options->definitions,
                       "pattern definitions: a JSON object {\"name\": \"expression\"} or a file holding one, "
                       "e.g. '{\"local\": \"previous_token | next_token\"}'");
  patterns->add_option("--top", options->top, "heads listed per pattern")->capture_default_str();
  patterns->add_option("--max-examples", options->max_examples, "the first N validation examples (0: all)")
      ->capture_default_str();
  patterns->add_option("--max-tokens", options->max_tokens, "tokens per batch (rows × longest)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  patterns->add_flag("--quiet", options->quiet, "no progress output");
  on_run(patterns, [options] { analyze_patterns(*options); });
}

}  // namespace strata::cli
