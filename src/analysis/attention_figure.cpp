#include "strata/analysis/attention_figure.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "strata/analysis/png.h"
#include "strata/core/strings.h"

#include "figure_svg.h"

namespace strata::analysis {

namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kDark{8, 48, 107};        // #08306b: a panel's largest weight
constexpr Rgb kSeparator{230, 85, 13};  // #e6550d: after the prefix columns
constexpr Rgb kFrame{160, 160, 160};
constexpr int kShades = 63;  // besides white
constexpr std::uint8_t kSeparatorIndex = kShades + 1, kFrameIndex = kShades + 2;
constexpr std::int64_t kGap = 16;  // px between panels in the PNG

std::vector<Rgb> palette() {
  std::vector<Rgb> colours;
  for (int k = 0; k <= kShades; ++k) {
    Rgb c;
    for (int i = 0; i < 3; ++i)
      c[i] = static_cast<std::uint8_t>(std::lround(kWhite[i] + (kDark[i] - kWhite[i]) * double(k) / kShades));
    colours.push_back(c);
  }
  colours.push_back(kSeparator);
  colours.push_back(kFrame);
  return colours;
}

// The panel's smallest and largest weight: the lightest and the darkest shade.
std::pair<float, float> range_of(const AttentionPanel& panel) {
  if (panel.values.empty()) return {0.0f, 0.0f};
  const auto [lo, hi] = std::minmax_element(panel.values.begin(), panel.values.end());
  return {*lo, *hi};
}

// A panel as palette indices: a 1-px frame, `cell` px per cell, a 1-px separator column
// after the prefix columns when there are both prefix and input keys.
struct Raster {
  std::int64_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

Raster raster(const AttentionPanel& panel) {
  const std::int64_t cell = std::clamp<std::int64_t>(320 / std::max<std::int64_t>({panel.rows, panel.cols, 1}), 1, 24);
  const bool separated = panel.prefix_length > 0 && panel.prefix_length < panel.cols;
  Raster r;
  r.width = panel.cols * cell + (separated ? 1 : 0) + 2;
  r.height = panel.rows * cell + 2;
  r.pixels.assign(static_cast<std::size_t>(r.width * r.height), kFrameIndex);
  const auto [lo, hi] = range_of(panel);
  for (std::int64_t i = 0; i < panel.rows; ++i)
    for (std::int64_t j = 0; j < panel.cols; ++j) {
      const float v = panel.values[static_cast<std::size_t>(i * panel.cols + j)];
      const float t = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0f, 1.0f) : 0.0f;
      const auto shade = static_cast<std::uint8_t>(std::lround(t * kShades));
      const std::int64_t x0 = 1 + j * cell + (separated && j >= panel.prefix_length ? 1 : 0), y0 = 1 + i * cell;
      for (std::int64_t y = y0; y < y0 + cell; ++y) std::fill_n(r.pixels.begin() + y * r.width + x0, cell, shade);
    }
  if (separated)
    for (std::int64_t y = 1; y < r.height - 1; ++y)
      r.pixels[static_cast<std::size_t>(y * r.width + 1 + panel.prefix_length * cell)] = kSeparatorIndex;
  return r;
}

std::string png_of(const Raster& r) { return encode_png(r.width, r.height, palette(), r.pixels); }

std::string base64(const std::string& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t word = 0;
    for (std::size_t k = 0; k < 3; ++k)
      word = (word << 8) | (k < n ? static_cast<std::uint8_t>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(word >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

}  // namespace

std::string attention_png(const AttentionFigure& figure) {
  std::vector<Raster> rasters;
  std::int64_t width = 0, height = 1;
  for (const AttentionPanel& panel : figure.panels) {
    rasters.push_back(raster(panel));
    width += (rasters.size() > 1 ? kGap : 0) + rasters.back().width;
    height = std::max(height, rasters.back().height);
  }
  width = std::max<std::int64_t>(width, 1);
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(width * height), 0);  // white
  std::int64_t left = 0;
  for (const Raster& r : rasters) {
    for (std::int64_t y = 0; y < r.height; ++y)
      std::copy_n(r.pixels.begin() + y * r.width, r.width, pixels.begin() + y * width + left);
    left += r.width + kGap;
  }
  return encode_png(width, height, palette(), pixels);
}

std::string attention_svg(const AttentionFigure& figure) {
  constexpr std::int64_t kLeft = 40, kTop = 64, kBetween = 40, kRight = 24;
  std::vector<Raster> rasters;
  std::int64_t panels_w = 0, panels_h = 0;
  for (const AttentionPanel& panel : figure.panels) {
    rasters.push_back(raster(panel));
    // Room for the captions under a narrow panel.
    panels_w += (rasters.size() > 1 ? kBetween : 0) + std::max<std::int64_t>(rasters.back().width, 180);
    panels_h = std::max(panels_h, rasters.back().height);
  }
  const auto text_w = [](const std::string& s, double px) { return static_cast<std::int64_t>(s.size() * px * 0.6) + 32; };
  const std::int64_t width =
      std::max<std::int64_t>({kLeft + panels_w + kRight, 480, text_w(figure.title, 15), text_w(figure.legend, 11)});
  const std::int64_t captions_y = kTop + panels_h + 18, height = captions_y + 64;

  std::string out = svg_head(width, height, figure.title, /*xlink=*/true);
  out += "<g font-size=\"11\" fill=\"#1a1a1a\">\n";
  std::int64_t left = kLeft;
  for (std::size_t p = 0; p < figure.panels.size(); ++p) {
    const AttentionPanel& panel = figure.panels[p];
    const Raster& r = rasters[p];
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", left, kTop - 10, xml_escape(panel.title));
    out += fmt::format("<image x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" style=\"image-rendering:pixelated\" "
                       "xlink:href=\"data:image/png;base64,{}\"/>\n",
                       left, kTop, r.width, r.height, base64(png_of(r)));
    out += fmt::format("<text transform=\"translate({} {}) rotate(-90)\" text-anchor=\"middle\" fill=\"#444444\">"
                       "queries ({})</text>\n",
                       left - 8, kTop + r.height / 2, panel.rows);
    const std::int64_t inputs = panel.cols - panel.prefix_length;
    const std::string keys = panel.prefix_length > 0
                                 ? fmt::format("keys: {} prefix | {} input", panel.prefix_length, inputs)
                                 : fmt::format("keys: {} input", inputs);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#444444\">{}</text>\n", left, captions_y, keys);
    const auto [lo, hi] = range_of(panel);
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#444444\">white {:.3g} to dark {:.3g}</text>\n", left,
                       captions_y + 16, lo, hi);
    left += std::max<std::int64_t>(r.width, 180) + kBetween;
  }
  out += "</g>\n";
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444444\">{}</text>\n"
                     "</svg>\n",
                     width / 2, captions_y + 42, xml_escape(figure.legend));
  return out;
}

}  // namespace strata::analysis
