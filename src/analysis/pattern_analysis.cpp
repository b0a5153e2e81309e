#include "strata/analysis/pattern_analysis.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/global_relevance.h"
#include "strata/analysis/heatmap_figure.h"
#include "strata/attn/patterns.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/task.h"

#include "analysis_output.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// --definitions: a JSON object given inline, or the path of a file holding one.
nlohmann::json read_definitions(const std::string& text) {
  const bool inline_json = text.find_first_not_of(" \t\n") != std::string::npos &&
                           text[text.find_first_not_of(" \t\n")] == '{';
  const std::string source = inline_json ? std::string("--definitions") : text;
  const std::string json_text = inline_json ? text : read_file(text);
  try {
    return nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw Error(source + ": not JSON: " + e.what());
  }
}

std::string head_label(const GlobalRelevance& gr, const RankedHead& head) {
  return fmt::format("{} head {}", gr.layers.at(head.layer), head.head + 1);
}

void print_summary(const GlobalRelevance& gr) {
  std::size_t width = 7;
  for (const PatternRelevance& p : gr.patterns) width = std::max(width, p.pattern.size());
  fmt::print("{:<{}}  {:>7}  {:>7}  {:>9}  {:<8}  best head\n", "pattern", width, "mean", "std", "mean+3std",
             "3-sigma");
  for (const PatternRelevance& p : gr.patterns) {
    const std::string best = p.top.empty() ? std::string("-")
                                           : fmt::format("{:.4f} ({})", p.top[0].value, head_label(gr, p.top[0]));
    fmt::print("{:<{}}  {:>7.4f}  {:>7.4f}  {:>9.4f}  {:<8}  {}\n", p.pattern, width, p.mean, p.std,
               p.mean + 3 * p.std, p.kept ? "kept" : "not kept", best);
  }
  for (const PatternRelevance& p : gr.patterns) {
    std::string list;
    for (const RankedHead& head : p.top)
      list += fmt::format("{}{} {:.4f}", list.empty() ? "" : ", ", head_label(gr, head), head.value);
    fmt::print("top heads of {}: {}\n", p.pattern, list);
  }
}

}  // namespace

void run_pattern_analysis(const PatternAnalysisOptions& options) {
  attn::PatternSet known;
  const nlohmann::json definitions =
      options.definitions.empty() ? nlohmann::json() : read_definitions(options.definitions);
  if (!definitions.is_null()) known.define(definitions);
  const std::vector<attn::Pattern> patterns = known.parse_list(options.patterns);
  if (patterns.empty())
    throw Error(fmt::format("--patterns: no pattern named; known patterns: {}", fmt::join(known.names(), ", ")));

  const recipes::TrainedTask loaded = recipes::load_trained_task(options.model, options.data, options.quiet);
  torch::nn::Module& model = loaded.task->model();
  const std::vector<NamedAttention> layers = encoder_self_attention(model);
  auto* source = dynamic_cast<AnalysisBatchSource*>(loaded.task.get());
  if (source == nullptr)
    throw Error(fmt::format("model {}: its kind of training task cannot hand its batches to the pattern analysis yet",
                            options.model));

  RelevanceOptions relevance_options;
  relevance_options.max_examples = options.max_examples;
  relevance_options.max_tokens = options.max_tokens;
  relevance_options.top = options.top;
  relevance_options.token_classes = token_class_table(*loaded.tokenizer);
  const std::vector<std::size_t>& costs = loaded.task->costs(train::Split::Valid);
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, costs.size()) : costs.size();
  Progress progress("global relevance", examples, "examples", options.quiet);
  relevance_options.progress = &progress;
  const GlobalRelevance gr =
      global_relevance(model, *source, costs, layers, patterns, relevance_options);
  progress.finish();

  const fs::path out = output_dir(options.out, options.model, "patterns");
  Json report = report_of(loaded.checkpoint, options.data, to_json(gr));
  std::vector<std::string> written;
  for (std::size_t p = 0; p < gr.patterns.size(); ++p) {
    const PatternRelevance& relevance = gr.patterns[p];
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

}  // namespace strata::analysis
