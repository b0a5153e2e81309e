#include "strata/analysis/heatmap_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "strata/analysis/png.h"
#include "strata/core/strings.h"

#include "figure_svg.h"

namespace strata::analysis {

namespace {

constexpr Rgb kHeatmapWhite{255, 255, 255};
constexpr Rgb kHeatmapDark{8, 48, 107};  // #08306b: the largest value
constexpr Rgb kOutline{230, 85, 13};     // #e6550d: outlined cells
constexpr Rgb kGrid{208, 208, 208};
constexpr int kHeatmapShades = 63;  // besides white

struct Scale {
  double lo = 0, hi = 0;
  // (value - lo) / (hi - lo) in [0, 1]; 0 on a flat scale.
  double at(double v) const { return hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0; }
};

Scale scale_of(const Heatmap& h) {
  Scale s;
  double largest = 0;
  bool any = false;
  for (const auto& row : h.values)
    for (const double v : row) {
      s.lo = any ? std::min(s.lo, v) : std::min(0.0, v);
      largest = any ? std::max(largest, v) : v;
      any = true;
    }
  s.hi = h.scale_max.value_or(largest);
  return s;
}

Rgb shade(double t) {
  Rgb out;
  for (int c = 0; c < 3; ++c)
    out[c] = static_cast<std::uint8_t>(std::lround(kHeatmapWhite[c] + (kHeatmapDark[c] - kHeatmapWhite[c]) * t));
  return out;
}

std::string hex(const Rgb& c) { return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]); }

std::size_t widest_row(const Heatmap& h) {
  std::size_t heads = 0;
  for (const auto& row : h.values) heads = std::max(heads, row.size());
  return heads;
}

std::string row_label(const Heatmap& h, std::int64_t r) {
  return r < static_cast<std::int64_t>(h.rows.size()) ? h.rows[r] : std::string();
}

std::string value_text(double v) { return fmt::format("{:.3f}", std::abs(v) < 5e-4 ? 0.0 : v); }

}  // namespace

std::string heatmap_svg(const Heatmap& h) {
  constexpr int kCellW = 56, kCellH = 30, kTop = 48, kRight = 24;
  const Scale scale = scale_of(h);
  const auto heads = static_cast<std::int64_t>(widest_row(h));
  const auto layers = static_cast<std::int64_t>(h.values.size());
  std::size_t label_chars = 0;
  for (const std::string& row : h.rows) label_chars = std::max(label_chars, row.size());
  // About 0.6 em a character at 11 px.
  const auto labels_w = static_cast<std::int64_t>(static_cast<double>(label_chars) * 6.6) + 20;
  const std::int64_t grid_w = heads * kCellW, grid_h = layers * kCellH;
  const auto title_w = static_cast<std::int64_t>(static_cast<double>(h.title.size()) * 15 * 0.6) + 32;
  const auto legend_w = static_cast<std::int64_t>(static_cast<double>(h.legend.size()) * 11 * 0.6) + 32;
  const std::int64_t width = std::max<std::int64_t>({labels_w + grid_w + kRight, 480, title_w, legend_w});
  // The labels and grid centred under the title; `left` is the grid's left edge.
  const std::int64_t left = labels_w + (width - (labels_w + grid_w + kRight)) / 2;
  const std::int64_t axis_y = kTop + grid_h + 18, bar_y = axis_y + 30, height = bar_y + 62;

  std::string out = svg_head(width, height, h.title);
  out += "<g font-size=\"11\" fill=\"#1a1a1a\">\n";
  for (std::int64_t r = 0; r < layers; ++r)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 8,
                       kTop + r * kCellH + kCellH / 2 + 4, xml_escape(row_label(h, r)));
  for (std::int64_t c = 0; c < heads; ++c)
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + c * kCellW + kCellW / 2,
                       axis_y, c + 1);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#444444\">head</text>\n",
                     left + grid_w / 2, axis_y + 16);
  out += "</g>\n<g font-size=\"11\" text-anchor=\"middle\">\n";
  for (std::int64_t r = 0; r < layers; ++r)
    for (std::size_t c = 0; c < h.values[r].size(); ++c) {
      const double v = h.values[r][c];
      const double t = scale.at(v);
      const std::int64_t x = left + static_cast<std::int64_t>(c) * kCellW, y = kTop + r * kCellH;
      out += fmt::format(
          "<g><title>{} head {}: {:.6g}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#d0d0d0\"/><text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text></g>\n",
          xml_escape(row_label(h, r)), c + 1, v, x, y, kCellW, kCellH, hex(shade(t)), x + kCellW / 2, y + kCellH / 2 + 4,
          t > 0.55 ? "#ffffff" : "#1a1a1a", value_text(v));
    }
  for (const auto& [r, c] : h.outlined) {
    if (r >= h.values.size() || c >= h.values[r].size()) continue;
    const auto x = left + static_cast<std::int64_t>(c) * kCellW, y = kTop + static_cast<std::int64_t>(r) * kCellH;
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{}\" "
                       "stroke-width=\"2.5\"/>\n",
                       x + 1, y + 1, kCellW - 2, kCellH - 2, hex(kOutline));
  }
  out += "</g>\n";
  const std::int64_t bar_w = std::max<std::int64_t>(grid_w, 240);
  out += fmt::format(
      "<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
      "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"{}\"/></linearGradient></defs>\n"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"url(#scale)\" stroke=\"#d0d0d0\"/>\n",
      hex(kHeatmapDark), left, bar_y, bar_w);
  out += fmt::format("<g font-size=\"11\" fill=\"#1a1a1a\" text-anchor=\"middle\">"
                     "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">{}</text></g>\n",
                     left, bar_y + 24, value_text(scale.lo), left + bar_w, bar_y + 24, value_text(scale.hi));
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444444\">{}</text>\n"
                     "</svg>\n",
                     width / 2, bar_y + 48, xml_escape(h.legend));
  return out;
}

std::string heatmap_png(const Heatmap& h) {
  constexpr std::int64_t kCellW = 32, kCellH = 20;
  // Palette: 0…63 white to dark by value, then the grid, the outline, and empty cells.
  std::vector<Rgb> palette;
  for (int k = 0; k <= kHeatmapShades; ++k) palette.push_back(shade(static_cast<double>(k) / kHeatmapShades));
  constexpr std::uint8_t kGridIndex = kHeatmapShades + 1, kOutlineIndex = kHeatmapShades + 2,
                         kEmptyIndex = kHeatmapShades + 3;
  palette.push_back(kGrid);
  palette.push_back(kOutline);
  palette.push_back({240, 240, 240});

  const Scale scale = scale_of(h);
  const auto heads = static_cast<std::int64_t>(std::max<std::size_t>(widest_row(h), 1));
  const auto layers = static_cast<std::int64_t>(std::max<std::size_t>(h.values.size(), 1));
  const std::int64_t width = heads * kCellW + 1, height = layers * kCellH + 1;
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width * height), kGridIndex);
  auto fill = [&](std::int64_t r, std::int64_t c, std::uint8_t index) {
    for (std::int64_t y = r * kCellH + 1; y < (r + 1) * kCellH; ++y)
      std::fill_n(pixels.begin() + y * width + c * kCellW + 1, kCellW - 1, index);
  };
  for (std::int64_t r = 0; r < static_cast<std::int64_t>(h.values.size()); ++r)
    for (std::int64_t c = 0; c < heads; ++c) {
      const bool present = c < static_cast<std::int64_t>(h.values[r].size());
      fill(r, c,
           present ? static_cast<std::uint8_t>(std::lround(scale.at(h.values[r][c]) * kHeatmapShades)) : kEmptyIndex);
    }
  for (const auto& [r, c] : h.outlined) {
    if (r >= h.values.size() || c >= h.values[r].size()) continue;
    // A 2-px frame inside the cell.
    const auto top = static_cast<std::int64_t>(r) * kCellH + 1, left = static_cast<std::int64_t>(c) * kCellW + 1;
    for (std::int64_t y = top; y < top + kCellH - 1; ++y)
      for (std::int64_t x = left; x < left + kCellW - 1; ++x)
        if (y < top + 2 || y >= top + kCellH - 3 || x < left + 2 || x >= left + kCellW - 3)
          pixels[static_cast<std::size_t>(y * width + x)] = kOutlineIndex;
  }
  return encode_png(width, height, palette, pixels);
}

}  // namespace strata::analysis
