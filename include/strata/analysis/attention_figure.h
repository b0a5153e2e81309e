#pragma once
// Attention maps as seed 000 draws them (Figure 1, A.4 Figure 6): queries down, the prefix keys
// then the input keys across, each cell shaded white to dark blue by its weight (from the
// panel's smallest to its largest weight, so that near-uniform attention still shows its
// structure), a thin orange line after the prefix columns. One figure holds a
// panel per example, side by side.
#include <cstdint>
#include <string>
#include <vector>

namespace strata::analysis {

struct AttentionPanel {
  // The initializers let callers name only some fields without -Wextra's warning.
  std::string title{};
  std::int64_t rows = 0, cols = 0;  // queries; prefix + input keys
  std::int64_t prefix_length = 0;
  std::vector<float> values{};  // rows × cols, row by row
};

struct AttentionFigure {
  std::string title{};
  std::string legend{};  // under the panels
  std::vector<AttentionPanel> panels{};
};

// The panels side by side, top-aligned, each framed in grey, with an integer number of pixels
// per cell so that the longer side of a panel is about 320 px (at least 1 px a cell); no text.
std::string attention_png(const AttentionFigure& figure);

// A standalone SVG: title, per panel its title, the panel's picture (a PNG inside, drawn
// pixelated), the separator, axis captions (queries; prefix and input key counts), the
// panel's weight range, and the legend. The same figure gives the same bytes.
std::string attention_svg(const AttentionFigure& figure);

}  // namespace strata::analysis
