#include "strata/analysis/metrics_plot.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/eval/svg_plot.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;

// Metric name -> one series per split, splits in their order of first appearance so that
// colours follow the file (train first in a usual run). std::map keeps the output order stable.
using Metrics = std::map<std::string, std::vector<Series>>;

// Lines without "split" are grouped under this label.
constexpr const char* kNoSplit = "all";

Series& series_for(std::vector<Series>& splits, const std::string& split) {
  const auto it = std::find_if(splits.begin(), splits.end(),
                               [&](const Series& s) { return s.label == split; });
  if (it != splits.end()) return *it;
  return splits.emplace_back(Series{split, {}, {}});
}

// A resumed run appends steps it already logged; ordering by step keeps the line from
// doubling back on itself (the stable sort keeps later duplicates after earlier ones).
void sort_by_step(Series& s) {
  std::vector<std::size_t> order(s.x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return s.x[a] < s.x[b]; });
  Series sorted{s.label, {}, {}};
  for (const std::size_t i : order) {
    sorted.x.push_back(s.x[i]);
    sorted.y.push_back(s.y[i]);
  }
  s = std::move(sorted);
}

Metrics read_metrics(const fs::path& path) {
  JsonlReader reader(path);
  Metrics metrics;
  nlohmann::json line;
  while (reader.next(line)) {
    const auto step = line.find("step");
    if (step == line.end()) throw reader.error("step", "missing; every metrics line needs one");
    if (!step->is_number())
      throw reader.error("step", std::string("expected a number, got ") + step->type_name());
    std::string split = kNoSplit;
    if (line.contains("split")) split = reader.string_field(line, "split");
    // Numbers only: strings, booleans and nulls (a value that was not logged) are not curves.
    for (const auto& [name, value] : line.items()) {
      if (name == "step" || !value.is_number()) continue;
      Series& s = series_for(metrics[name], split);
      s.x.push_back(step->get<double>());
      s.y.push_back(value.get<double>());
    }
  }
  if (metrics.empty())
    throw Error(fmt::format(
        "{}: no numeric metrics besides 'step' (expected lines like "
        "{{\"step\": 100, \"split\": \"train\", \"loss\": 2.31}})",
        path.string()));
  for (auto& [name, splits] : metrics)
    for (Series& s : splits) sort_by_step(s);
  return metrics;
}

// The metric name as a file name: characters other than letters, digits, '-', '_' and a
// non-leading '.' become '_' ("eval/loss" -> "eval_loss.svg").
std::string svg_file_name(const std::string& metric) {
  std::string name = metric;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool keep = std::isalnum(c) || c == '-' || c == '_' || (c == '.' && i > 0);
    if (!keep) name[i] = '_';
  }
  return name + ".svg";
}

}  // namespace

void run_metrics_plot(const MetricsPlotOptions& options) {
  const fs::path run = options.run_dir;
  if (!fs::is_directory(run))
    throw Error(fmt::format("run directory '{}' does not exist", run.string()));
  const fs::path metrics_path = options.metrics.empty() ? run / "metrics.jsonl" : fs::path(options.metrics);
  const fs::path out = options.out.empty() ? run / "plots" : fs::path(options.out);
  const Metrics metrics = read_metrics(metrics_path);

  std::set<std::string> names;
  for (const auto& [metric, splits] : metrics) {
    const std::string name = svg_file_name(metric);
    if (!names.insert(name).second)
      throw Error(fmt::format("{}: metrics '{}' and another share the file name {}",
                              metrics_path.string(), metric, name));
  }
  fs::create_directories(out);
  for (const auto& [metric, splits] : metrics) {
    const fs::path file = out / svg_file_name(metric);
    write_file_atomic(file, line_chart_svg(splits, {.title = metric, .x_label = "step", .y_label = metric}));
    std::printf("wrote %s\n", file.c_str());
  }
}

}  // namespace strata::analysis
