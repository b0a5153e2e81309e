#include "strata/analysis/bias_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "strata/analysis/png.h"
#include "strata/core/strings.h"

#include "figure_svg.h"

namespace strata::analysis {

namespace {

constexpr Rgb kBiasWhite{255, 255, 255};
constexpr Rgb kBlue{33, 102, 172};    // #2166ac: positive
constexpr Rgb kOrange{224, 130, 20};  // #e08214: negative
constexpr int kBiasShades = 63;       // per sign, besides white

// |value| / max_abs in [0, 1]; 0 when every value is 0.
double intensity(float value, double max_abs) {
  return max_abs > 0 ? std::min(1.0, std::abs(static_cast<double>(value)) / max_abs) : 0.0;
}

Rgb blend(const Rgb& to, double t) {
  Rgb out;
  for (int c = 0; c < 3; ++c)
    out[c] = static_cast<std::uint8_t>(std::lround(kBiasWhite[c] + (to[c] - kBiasWhite[c]) * t));
  return out;
}

Rgb colour_of(float value, double max_abs) {
  return blend(value < 0 ? kOrange : kBlue, intensity(value, max_abs));
}

std::string bias_hex(const Rgb& c) { return fmt::format("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]); }

double max_abs_of(const BiasMatrix& m) {
  double max_abs = 0;
  for (const float v : m.values) max_abs = std::max(max_abs, std::abs(static_cast<double>(v)));
  return max_abs;
}

std::size_t utf8_length(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string section_label(const std::string& heading) {
  std::string label = "§";
  label += heading;
  return label;
}

}  // namespace

std::string hundredfold(float value) {
  // Rounded first, so that a small negative value prints "0.0", not "-0.0".
  const double rounded = std::round(static_cast<double>(value) * 1000.0) / 10.0;
  return fmt::format("{:.1f}", rounded == 0 ? 0.0 : rounded);
}

std::string bias_svg(const BiasMatrix& m, const std::string& title) {
  constexpr int kCell = 56, kLeft = 112, kTop = 84, kRight = 24;
  const std::int64_t s = m.size();
  const double max_abs = max_abs_of(m);
  const std::int64_t grid = s * kCell;
  // Wide enough for the grid, the legend line and the title (about 0.6 em a character).
  const auto title_width = static_cast<std::int64_t>(static_cast<double>(utf8_length(title)) * 15 * 0.6) + 32;
  const std::int64_t width = std::max<std::int64_t>({kLeft + grid + kRight, 600, title_width});
  // The grid and its labels centred under the title.
  const std::int64_t grid_left = kLeft + (width - (kLeft + grid + kRight)) / 2;
  const std::int64_t bar_y = kTop + grid + 24;
  const std::int64_t height = bar_y + 64;

  std::string out = svg_head(width, height, title);
  // Axis titles: keys across the top, queries down the left.
  out += fmt::format("<text x=\"{}\" y=\"48\" font-size=\"12\" text-anchor=\"middle\" fill=\"#444444\">"
                     "key section</text>\n",
                     grid_left + grid / 2);
  out += fmt::format("<text x=\"{0}\" y=\"{1}\" font-size=\"12\" text-anchor=\"middle\" fill=\"#444444\" "
                     "transform=\"rotate(-90 {0} {1})\">query section</text>\n",
                     grid_left - kLeft + 18, kTop + grid / 2);
  out += "<g font-size=\"11\" fill=\"#1a1a1a\">\n";
  for (std::int64_t k = 0; k < s; ++k) {
    const std::string label = xml_escape(section_label(m.sections[k]));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       grid_left + k * kCell + kCell / 2, kTop - 8, label);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", grid_left - 8,
                       kTop + k * kCell + kCell / 2 + 4, label);
  }
  out += "</g>\n<g font-size=\"12\" text-anchor=\"middle\">\n";
  for (std::int64_t x = 0; x < s; ++x)
    for (std::int64_t y = 0; y < s; ++y) {
      const float v = m.at(x, y);
      const std::int64_t left = grid_left + y * kCell, top = kTop + x * kCell;
      const std::size_t at = static_cast<std::size_t>(x * s + y);
      std::string tip = section_label(m.sections[x]);
      tip += " to ";
      tip += section_label(m.sections[y]);
      tip += fmt::format(": {} = {:.6g}{}", m.labels[at], v, m.clamped[at] ? " (clamped)" : "");
      // White digits on dark blue; dark digits read well on every orange.
      const bool light_text = v > 0 && intensity(v, max_abs) > 0.55;
      out += fmt::format(
          "<g><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
          "stroke=\"#d0d0d0\"/><text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text></g>\n",
          xml_escape(tip), left, top, kCell, kCell, bias_hex(colour_of(v, max_abs)), left + kCell / 2,
          top + kCell / 2 + 4, light_text ? "#ffffff" : "#1a1a1a", hundredfold(v));
    }
  out += "</g>\n";
  // Colour bar: orange at -max through white to blue at +max, labelled × 100.
  const std::int64_t bar_left = grid_left, bar_width = std::max<std::int64_t>(grid, 240);
  out += fmt::format(
      "<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
      "<stop offset=\"0\" stop-color=\"{}\"/><stop offset=\"0.5\" stop-color=\"#ffffff\"/>"
      "<stop offset=\"1\" stop-color=\"{}\"/></linearGradient></defs>\n"
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" fill=\"url(#scale)\" stroke=\"#d0d0d0\"/>\n",
      bias_hex(kOrange), bias_hex(kBlue), bar_left, bar_y, bar_width);
  const float top_value = static_cast<float>(max_abs);
  out += fmt::format("<g font-size=\"11\" fill=\"#1a1a1a\" text-anchor=\"middle\">"
                     "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">0</text>"
                     "<text x=\"{}\" y=\"{}\">{}</text></g>\n",
                     bar_left, bar_y + 24, hundredfold(-top_value), bar_left + bar_width / 2, bar_y + 24,
                     bar_left + bar_width, bar_y + 24, hundredfold(top_value));
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#444444\">"
                     "values × 100; blue positive, orange negative; rows: query section, columns: key "
                     "section</text>\n</svg>\n",
                     width / 2, bar_y + 48);
  return out;
}

std::string bias_png(const BiasMatrix& m) {
  constexpr std::int64_t kCell = 32;
  // Palette: 0 white, 1…63 blue by intensity, 64…126 orange, 127 the grid.
  std::vector<Rgb> palette{kBiasWhite};
  for (int k = 1; k <= kBiasShades; ++k) palette.push_back(blend(kBlue, static_cast<double>(k) / kBiasShades));
  for (int k = 1; k <= kBiasShades; ++k) palette.push_back(blend(kOrange, static_cast<double>(k) / kBiasShades));
  constexpr std::uint8_t kGrid = 2 * kBiasShades + 1;
  palette.push_back({208, 208, 208});

  const std::int64_t s = m.size(), side = s * kCell + 1;
  const double max_abs = max_abs_of(m);
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(side * side), kGrid);
  for (std::int64_t x = 0; x < s; ++x)
    for (std::int64_t y = 0; y < s; ++y) {
      const float v = m.at(x, y);
      const auto level = static_cast<int>(std::lround(intensity(v, max_abs) * kBiasShades));
      const auto index = static_cast<std::uint8_t>(level == 0 ? 0 : v < 0 ? kBiasShades + level : level);
      for (std::int64_t r = x * kCell + 1; r < (x + 1) * kCell; ++r)
        std::fill_n(pixels.begin() + r * side + y * kCell + 1, kCell - 1, index);
    }
  return encode_png(side, side, palette, pixels);
}

}  // namespace strata::analysis
