#pragma once
// `strata plot`: one SVG line chart per metric of a training run's metrics.jsonl, with one
// series per split (train, validation, ...), against step.
#include <string>

namespace strata::analysis {

struct MetricsPlotOptions {
  std::string run_dir;  // the run directory
  std::string metrics;  // metrics JSONL; default RUN_DIR/metrics.jsonl
  std::string out;      // default RUN_DIR/plots
};

// Writes OUT/METRIC.svg per numeric metric (characters other than letters, digits, '-', '_'
// and a non-leading '.' become '_') and prints each file written. strata::Error for a missing
// run directory, a metrics file without numeric metrics or two metrics sharing a file name.
void run_metrics_plot(const MetricsPlotOptions& options);

}  // namespace strata::analysis
