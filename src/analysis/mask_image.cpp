#include "strata/analysis/mask_image.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "strata/analysis/png.h"
#include "strata/core/strings.h"

namespace strata::analysis {

namespace {

bool same_runs(const std::vector<MaskImage::Run>& a, const std::vector<MaskImage::Run>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const MaskImage::Run& x, const MaskImage::Run& y) {
    return x.begin == y.begin && x.end == y.end;
  });
}

}  // namespace

void MaskImage::add_row(const std::uint8_t* visible) {
  std::vector<Run>& row = runs.emplace_back();
  for (std::int64_t c = 0; c < cols;) {
    if (!visible[c]) {
      ++c;
      continue;
    }
    const std::int64_t begin = c;
    while (c < cols && visible[c]) ++c;
    row.push_back({static_cast<std::int32_t>(begin), static_cast<std::int32_t>(c)});
  }
}

std::string mask_svg(const MaskImage& image) {
  const double longest = static_cast<double>(std::max<std::int64_t>({image.rows, image.cols, 1}));
  const double scale = 768.0 / longest;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {} {}\" shape-rendering=\"crispEdges\">\n<title>{}</title>\n"
      "<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n<g fill=\"#1a1a1a\">\n",
      image.cols * scale, image.rows * scale, image.cols, image.rows, xml_escape(image.title),
      image.cols, image.rows);
  // Consecutive rows with the same runs share their rects (a block diagonal is one rect a block).
  for (std::size_t r = 0; r < image.runs.size();) {
    std::size_t next = r + 1;
    while (next < image.runs.size() && same_runs(image.runs[next], image.runs[r])) ++next;
    for (const MaskImage::Run& run : image.runs[r])
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", run.begin, r,
                         run.end - run.begin, next - r);
    r = next;
  }
  out += "</g>\n<g stroke=\"#e69f00\" stroke-width=\"1\" vector-effect=\"non-scaling-stroke\">\n";
  for (const std::int64_t r : image.row_lines)
    out += fmt::format("<line x1=\"0\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n", r, image.cols, r);
  for (const std::int64_t c : image.col_lines)
    out += fmt::format("<line x1=\"{}\" y1=\"0\" x2=\"{}\" y2=\"{}\"/>\n", c, c, image.rows);
  out += "</g>\n</svg>\n";
  return out;
}

std::string mask_png(const MaskImage& image) {
  // Index bit 0: visible; bit 1: on a boundary line.
  constexpr std::array<Rgb, 4> kPalette{{{255, 255, 255}, {26, 26, 26}, {246, 207, 128}, {150, 90, 0}}};
  std::vector<std::uint8_t> pixels(static_cast<std::size_t>(image.rows * image.cols), 0);
  for (std::size_t r = 0; r < image.runs.size(); ++r)
    for (const MaskImage::Run& run : image.runs[r])
      std::fill(pixels.begin() + static_cast<std::ptrdiff_t>(r * image.cols + run.begin),
                pixels.begin() + static_cast<std::ptrdiff_t>(r * image.cols + run.end), 1);
  for (const std::int64_t r : image.row_lines)
    if (r < image.rows)
      for (std::int64_t c = 0; c < image.cols; ++c) pixels[r * image.cols + c] |= 2;
  for (const std::int64_t c : image.col_lines)
    if (c < image.cols)
      for (std::int64_t r = 0; r < image.rows; ++r) pixels[r * image.cols + c] |= 2;
  return encode_png(image.cols, image.rows, kPalette, pixels);
}

}  // namespace strata::analysis
