#pragma once
// A small, dependency-free SVG line chart for training curves (loss, learning rate, ROUGE
// against step). The output is deterministic: the same input gives the same bytes, so plots
// can be compared and committed.
#include <string>
#include <vector>

namespace strata {

struct Series {
  std::string label;
  std::vector<double> x, y;  // same length; a point with a NaN/inf coordinate is a gap
};

struct ChartOptions {
  // The initializers let callers name only some fields ({.title = "loss"}) without -Wextra's
  // missing-initializer warning.
  std::string title{}, x_label{}, y_label{};
  // A logarithmic y axis. Points with y <= 0 cannot be placed on it and are skipped like
  // NaN points (a gap in the line), so a curve that touches zero still draws its other parts.
  bool log_y = false;
  int width = 640, height = 400;
};

// "Nice" tick values covering [lo, hi]: multiples of a step of 1, 2 or 5 times a power of
// ten, chosen for about `intervals` intervals; the first tick is <= lo and the last >= hi.
// [0, 1] gives 0, 0.2, ..., 1; [3, 97] gives 0, 20, ..., 100. lo == hi is widened around it.
std::vector<double> nice_ticks(double lo, double hi, int intervals = 5);

// Ticks for a log axis over [lo, hi] (both > 0): the powers of ten around the range, with
// 2x and 5x added when that gives fewer than three ticks.
std::vector<double> log_ticks(double lo, double hi);

// The chart as a standalone SVG document: axes with tick labels, one polyline per run of
// drawable points (a lone point is a marker), a legend, a colour-blind-safe palette (Okabe-Ito).
// Series with no drawable point at all give a chart that says "no data". Throws strata::Error
// when a series' x and y differ in length.
std::string line_chart_svg(const std::vector<Series>& series, const ChartOptions& options);

}  // namespace strata
