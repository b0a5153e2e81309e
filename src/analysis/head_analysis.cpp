#include "strata/analysis/head_analysis.h"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/head_importance.h"
#include "strata/analysis/heatmap_figure.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/task.h"

#include "analysis_output.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;

std::string describe(const HeadImportance& importance) {
  const bool taylor = importance.method == ImportanceMethod::Taylor;
  const bool per_layer = importance.normalize == ImportanceNormalization::Layer;
  return fmt::format("{}{}", taylor ? "first-order Taylor" : "head mask", per_layer ? ", L2-normalised per layer" : "");
}

// Layers down, heads across, the most important head of each layer starred.
void print_table(const HeadImportance& importance) {
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

}  // namespace

void run_head_analysis(const HeadAnalysisOptions& options) {
  ImportanceOptions importance_options;
  importance_options.method = importance_method_from_name(options.method);
  importance_options.normalize = normalization_from_name(options.normalize);
  importance_options.max_examples = options.max_examples;
  importance_options.max_tokens = options.max_tokens;

  const recipes::TrainedTask loaded = recipes::load_trained_task(options.model, options.data, options.quiet);
  const std::size_t available = loaded.task->costs(train::Split::Valid).size();
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, available) : available;
  Progress progress("head importance", examples, "examples", options.quiet);
  importance_options.progress = &progress;
  const HeadImportance importance = head_importance(*loaded.task, importance_options);
  progress.finish();

  const fs::path out = output_dir(options.out, options.model, "heads");
  write_file_atomic(out / "importance.json", report_of(loaded.checkpoint, options.data, to_json(importance)).dump(2) + "\n");

  Heatmap figure;
  figure.title = fmt::format("Head importance ({}), {} validation examples", describe(importance), importance.examples);
  figure.rows = importance.layers;
  figure.values = importance.scores;
  figure.legend = fmt::format("{} importance per head; framed: the most important head of each layer",
                              importance_method_name(importance.method));
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

}  // namespace strata::analysis
