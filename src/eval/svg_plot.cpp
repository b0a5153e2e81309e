#include "strata/eval/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/strings.h"

namespace strata {

namespace {

// Okabe & Ito's palette, which stays distinct under the common colour-vision deficiencies;
// its yellow is last because it is faint on white.
constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr double kCharWidth = 7.0;  // rough advance of a 12px sans-serif glyph, for the legend

// k * f * 10^e computed so that it is the double nearest the decimal value: dividing by an
// exact power of ten avoids 3 * 0.2 == 0.6000000000000001 in tick labels.
double scaled(double k_times_f, int e) {
  return e >= 0 ? k_times_f * std::pow(10.0, e) : k_times_f / std::pow(10.0, -e);
}

// Shortest round-trip form: 0.2, 100, 5400, 1e-05.
std::string tick_label(double value) { return fmt::format("{}", value); }

struct Frame {
  double left, right, top, bottom;  // the plot area in SVG pixels
};

// Maps data values onto one axis of the frame; a log axis maps log10 of the value.
struct Axis {
  double lo, hi;  // in axis units (log10 of the value on a log axis)
  bool log;
  double pixel_from, pixel_to;
  double operator()(double value) const {
    const double t = log ? std::log10(value) : value;
    return pixel_from + (t - lo) / (hi - lo) * (pixel_to - pixel_from);
  }
};

struct Bounds {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  bool empty() const { return x_lo > x_hi; }
};

bool drawable(double x, double y, bool log_y) {
  return std::isfinite(x) && std::isfinite(y) && (!log_y || y > 0);
}

Bounds data_bounds(const std::vector<Series>& series, bool log_y) {
  Bounds b;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size())
      throw Error(fmt::format("series '{}': {} x values but {} y values", s.label, s.x.size(),
                              s.y.size()));
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!drawable(s.x[i], s.y[i], log_y)) continue;
      b.x_lo = std::min(b.x_lo, s.x[i]);
      b.x_hi = std::max(b.x_hi, s.x[i]);
      b.y_lo = std::min(b.y_lo, s.y[i]);
      b.y_hi = std::max(b.y_hi, s.y[i]);
    }
  }
  return b;
}

void append_text(std::string& svg, double x, double y, std::string_view anchor,
                 std::string_view text, std::string_view extra = "") {
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y,
                     anchor, extra, xml_escape(text));
}

void append_title_and_labels(std::string& svg, const ChartOptions& o, const Frame& f) {
  const double mid_x = (f.left + f.right) / 2, mid_y = (f.top + f.bottom) / 2;
  if (!o.title.empty()) append_text(svg, mid_x, 22, "middle", o.title, " font-size=\"15\"");
  if (!o.x_label.empty()) append_text(svg, mid_x, f.bottom + 38, "middle", o.x_label);
  if (!o.y_label.empty())
    append_text(svg, 16, mid_y, "middle", o.y_label,
                fmt::format(" transform=\"rotate(-90 16 {:.1f})\"", mid_y));
}

// Grid lines and tick labels for both axes, then the frame on top of the grid.
void append_axes(std::string& svg, const Frame& f, const Axis& x, const std::vector<double>& x_ticks,
                 const Axis& y, const std::vector<double>& y_ticks) {
  svg += "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (const double t : x_ticks)
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n",
                       x(t), f.top, f.bottom);
  for (const double t : y_ticks)
    svg += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\"/>\n",
                       y(t), f.left, f.right);
  svg += "</g>\n";
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#444\" stroke-width=\"1\"/>\n",
      f.left, f.top, f.right - f.left, f.bottom - f.top);
  svg += "<g fill=\"#333\">\n";
  for (const double t : x_ticks) append_text(svg, x(t), f.bottom + 16, "middle", tick_label(t));
  for (const double t : y_ticks) append_text(svg, f.left - 6, y(t) + 4, "end", tick_label(t));
  svg += "</g>\n";
}

// One polyline per run of drawable points; a run of one point becomes a marker, so an
// isolated value (say, a single validation step) stays visible.
void append_series(std::string& svg, const Series& s, const char* colour, const Axis& x,
                   const Axis& y) {
  std::vector<std::pair<double, double>> run;
  const auto flush = [&] {
    if (run.size() == 1) {
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n",
                         run[0].first, run[0].second, colour);
    } else if (run.size() > 1) {
      std::string points;
      for (const auto& [px, py] : run)
        points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px, py);
      svg += fmt::format(
          "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" "
          "stroke-linejoin=\"round\"/>\n",
          points, colour);
    }
    run.clear();
  };
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    if (drawable(s.x[i], s.y[i], y.log)) run.emplace_back(x(s.x[i]), y(s.y[i]));
    else flush();
  }
  flush();
}

// The legend in the plot area's top-right corner, on a translucent white box.
void append_legend(std::string& svg, const std::vector<Series>& series, const Frame& f) {
  std::size_t longest = 0;
  for (const Series& s : series) longest = std::max(longest, s.label.size());
  const double width = 36 + kCharWidth * static_cast<double>(longest);
  const double height = 8 + 16 * static_cast<double>(series.size());
  const double left = f.right - width - 8, top = f.top + 8;
  svg += fmt::format(
      "<g>\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"white\" "
      "fill-opacity=\"0.85\" stroke=\"#bbb\"/>\n",
      left, top, width, height);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double row = top + 12 + 16 * static_cast<double>(i);
    svg += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
        "stroke-width=\"2\"/>\n",
        left + 6, row, left + 24, row, kPalette[i % std::size(kPalette)]);
    append_text(svg, left + 30, row + 4, "start", series[i].label);
  }
  svg += "</g>\n";
}

}  // namespace

std::vector<double> nice_ticks(double lo, double hi, int intervals) {
  if (hi < lo) std::swap(lo, hi);
  if (lo == hi) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(intervals, 1);
  int e = static_cast<int>(std::floor(std::log10(raw)));
  const double fraction = raw / std::pow(10.0, e);
  double f = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  if (f == 10) {
    f = 1;
    ++e;
  }
  const double step = scaled(f, e);
  // The tolerance keeps lo = 0.6 with step 0.2 from rounding down to an extra tick at 0.4.
  const auto first = static_cast<long long>(std::floor(lo / step + 1e-9));
  const auto last = static_cast<long long>(std::ceil(hi / step - 1e-9));
  std::vector<double> ticks;
  for (long long k = first; k <= last; ++k) ticks.push_back(scaled(static_cast<double>(k) * f, e));
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (hi < lo) std::swap(lo, hi);
  int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (first == last) ++last;
  std::vector<double> ticks;
  const bool dense = last - first < 2;
  for (int e = first; e < last; ++e) {
    ticks.push_back(scaled(1, e));
    if (dense) {
      ticks.push_back(scaled(2, e));
      ticks.push_back(scaled(5, e));
    }
  }
  ticks.push_back(scaled(1, last));
  return ticks;
}

std::string line_chart_svg(const std::vector<Series>& series, const ChartOptions& options) {
  const Bounds bounds = data_bounds(series, options.log_y);
  std::vector<double> x_ticks, y_ticks;
  if (!bounds.empty()) {
    x_ticks = nice_ticks(bounds.x_lo, bounds.x_hi);
    y_ticks = options.log_y ? log_ticks(bounds.y_lo, bounds.y_hi)
                            : nice_ticks(bounds.y_lo, bounds.y_hi);
  }
  // The left margin fits the widest y tick label between the rotated y label and the axis.
  std::size_t widest = 4;
  for (const double t : y_ticks) widest = std::max(widest, tick_label(t).size());
  const double width = options.width, height = options.height;
  const Frame frame{36 + kCharWidth * static_cast<double>(widest), width - 20,
                    options.title.empty() ? 16.0 : 36.0, height - 48};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n",
      options.width, options.height);
  append_title_and_labels(svg, options, frame);
  if (bounds.empty()) {
    append_text(svg, (frame.left + frame.right) / 2, (frame.top + frame.bottom) / 2, "middle",
                "no data", " fill=\"#666\" font-size=\"16\"");
    return svg + "</svg>\n";
  }

  const auto axis_unit = [&](double v) { return options.log_y ? std::log10(v) : v; };
  const Axis x{x_ticks.front(), x_ticks.back(), false, frame.left, frame.right};
  const Axis y{axis_unit(y_ticks.front()), axis_unit(y_ticks.back()), options.log_y,
               frame.bottom, frame.top};
  append_axes(svg, frame, x, x_ticks, y, y_ticks);
  for (std::size_t i = 0; i < series.size(); ++i)
    append_series(svg, series[i], kPalette[i % std::size(kPalette)], x, y);
  const bool labelled =
      std::any_of(series.begin(), series.end(), [](const Series& s) { return !s.label.empty(); });
  if (labelled) append_legend(svg, series, frame);
  return svg + "</svg>\n";
}

}  // namespace strata
