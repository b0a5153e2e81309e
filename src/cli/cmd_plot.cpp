// strata plot: one SVG line chart per metric of a training run's metrics.jsonl, with one
// series per split (train, validation, ...), against step.
#include <memory>

#include "commands.h"
#include "strata/analysis/metrics_plot.h"

namespace strata::cli {

void register_plot(CLI::App& app) {
  auto* plot = app.add_subcommand(
      "plot",
      "Plot a training run's metrics: reads RUN_DIR/metrics.jsonl (one JSON object a line, "
      "with a numeric \"step\", an optional \"split\" and numeric metrics) and writes one SVG "
      "line chart per metric, one series per split, into RUN_DIR/plots.");
  auto options = std::make_shared<analysis::MetricsPlotOptions>();
  plot->add_option("RUN_DIR", options->run_dir, "the run directory")->required();
  plot->add_option("--metrics", options->metrics, "metrics JSONL (default RUN_DIR/metrics.jsonl)");
  plot->add_option("--out", options->out, "output directory (default RUN_DIR/plots)");
  on_run(plot, [options] { analysis::run_metrics_plot(*options); });
}

}  // namespace strata::cli
