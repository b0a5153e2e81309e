// strata analyze heads: which attention heads a trained model's task depends on (seed 003
// §3.1.1, §4.2.1): every head's importance on validation data, as a layers × heads table,
// heatmap (Figure 2 A, Figure 3) and JSON.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "heatmap_figure.h"
#include "strata/analysis/head_importance.h"
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

struct HeadsOptions {
  std::string model, data, out, method = "taylor", normalize = "layer";
  std::size_t max_examples = 0, max_tokens = 4096;
  bool quiet = false;
};

std::string describe(const analysis::HeadImportance& importance) {
  const bool taylor = importance.method == analysis::ImportanceMethod::Taylor;
  const bool per_layer = importance.normalize == analysis::ImportanceNormalization::Layer;
  return fmt::format("{}{}", taylor ? "first-order Taylor" : "head mask", per_layer ? ", L2-normalised per layer" : "");
}

// Layers down, heads across, the most important head of each layer starred.
void print_table(const analysis::HeadImportance& importance) {
  std::size_t name_width = 5, heads = 0;
  for (std::size_t l = 0; l < importance.layers.size(); ++l) {
    name_width = std::max(name_width, importance.layers[l].size());
    heads = std::max(heads, importance.scores[l].size());
  }
  std::string header = fmt::format("{:<{}}", "layer", name_width);
  for (std::size_t h = 0; h < heads; ++h) header += fmt::format(" {:>9}", fmt::format("head {}", h + 1));
  fmt::print("{}\n", header);
  for (std::size_t l = 0; l < importance.layers.size(); ++l) {
    const std::vector<double>& row = importance.scores[l];
    const auto best = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
    std::string line = fmt::format("{:<{}}", importance.layers[l], name_width);
    for (std::size_t h = 0; h < row.size(); ++h) line += fmt::format(" {:>8.4f}{}", row[h], h == best ? "*" : " ");
    fmt::print("{}\n", line);
  }
  fmt::print("* the most important head of its layer\n");
}

void analyze_heads(const HeadsOptions& options) {
  analysis::ImportanceOptions importance_options;
  importance_options.method = analysis::importance_method_from_name(options.method);
  importance_options.normalize = analysis::normalization_from_name(options.normalize);
  importance_options.max_examples = options.max_examples;
  importance_options.max_tokens = options.max_tokens;

  TrainedTask loaded = load_trained_task(options.model, options.data, options.quiet);
  const std::size_t available = loaded.task->costs(train::Split::Valid).size();
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, available) : available;
  Progress progress("head importance", examples, "examples", options.quiet);
  importance_options.progress = &progress;
  const analysis::HeadImportance importance = analysis::head_importance(*loaded.task, importance_options);
  progress.finish();

  const fs::path out = options.out.empty() ? fs::path(options.model) / "heads" : fs::path(options.out);
  fs::create_directories(out);
  Json report;
  report["model"] = loaded.checkpoint.string();
  report["data"] = options.data;
  const Json body = analysis::to_json(importance);  // named: items() of a temporary would dangle
  for (const auto& [key, value] : body.items()) report[key] = value;
  write_file_atomic(out / "importance.json", report.dump(2) + "\n");

  Heatmap figure;
  figure.title = fmt::format("Head importance ({}), {} validation examples", describe(importance), importance.examples);
  figure.rows = importance.layers;
  figure.values = importance.scores;
  figure.legend = fmt::format("{} importance per head; framed: the most important head of each layer",
                              analysis::importance_method_name(importance.method));
  for (std::size_t l = 0; l < importance.scores.size(); ++l) {
    const auto& row = importance.scores[l];
    if (!row.empty())
      figure.outlined.insert({l, static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin())});
  }
  write_file_atomic(out / "importance.svg", heatmap_svg(figure));
  write_file_atomic(out / "importance.png", heatmap_png(figure));

  fmt::print("head importance ({}) over {} validation examples, {} labels\n", describe(importance),
             importance.examples, importance.labels);
  print_table(importance);
  fmt::print("wrote {}: importance.json, importance.svg, importance.png\n", out.string());
}

}  // namespace

void register_analyze_heads(CLI::App& analyze) {
  CLI::App* heads = analyze.add_subcommand(
      "heads",
      "Estimate how much a trained model's task depends on each attention head (seed 003 §3.1.1): "
      "the gradient of the validation loss, per head of every attention module, by the first-order "
      "Taylor expansion (|Σ gradient × parameter| over the head's q/k/v rows and out_proj columns; "
      "Molchanov et al. 2019) or through a head mask (|∂loss/∂gate|, Michel et al. 2019). Writes "
      "OUT/importance.json (layers, scores[layer][head], heads from 0), importance.svg and "
      "importance.png (layers × heads, the first layer on top, heads from 1) and prints the table.");
  auto options = std::make_shared<HeadsOptions>();
  heads->add_option("--model", options->model, "a run directory or checkpoint of `strata train`")->required();
  heads->add_option("--data", options->data, "validation data (JSONL, as the model was trained on)")->required();
  heads->add_option("--out", options->out, "output directory (default: MODEL/heads)");
  heads->add_option("--method", options->method, "taylor or head_mask")
      ->check(CLI::IsMember({"taylor", "head_mask"}))
      ->capture_default_str();
  heads->add_option("--normalize", options->normalize, "layer (each layer's scores divided by their L2 norm) or none")
      ->check(CLI::IsMember({"layer", "none"}))
      ->capture_default_str();
  heads->add_option("--max-examples", options->max_examples, "the first N validation examples (0: all)")
      ->capture_default_str();
  heads->add_option("--max-tokens", options->max_tokens, "tokens per batch (rows × longest)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  heads->add_flag("--quiet", options->quiet, "no progress output");
  on_run(heads, [options] { analyze_heads(*options); });
}

}  // namespace strata::cli
