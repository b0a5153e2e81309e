#pragma once
// A layers × heads heatmap, as seed 003 draws head importance (Figure 2 A, Figure 3) and each
// pattern's global relevance (Figure 2 C): one row per attention layer, the first layer on
// top and the last just above the head axis (Figure 3: its last layer's intra-sentence head,
// the most important, sits in the bottom row), heads numbered from 1 across, each cell shaded
// white to dark blue by its value with the value printed in it.
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "strata/analysis/head_importance.h"

namespace strata::analysis {

struct Heatmap {
  // The initializers let callers name only some fields without -Wextra's warning.
  std::string title{};
  std::vector<std::string> rows{};  // a label per layer (the attention module's name)
  HeadMatrix values{};              // rows × heads; a shorter row leaves its last cells empty
  std::string legend{};             // what the values are, printed under the colour scale
  // The value drawn darkest; default the largest value. The lightest is min(0, smallest).
  std::optional<double> scale_max{};
  std::set<std::pair<std::size_t, std::size_t>> outlined{};  // (row, head) cells framed in orange
};

// A standalone SVG: title, row labels, head numbers, one shaded cell per head with its value
// (3 decimals) and a tooltip, a colour bar with its end values, the legend. The same heatmap
// gives the same bytes.
std::string heatmap_svg(const Heatmap& heatmap);

// A PNG of the shading alone, in the same arrangement: 32 × 20 px per cell, 1-px grid lines,
// outlined cells framed; no text.
std::string heatmap_png(const Heatmap& heatmap);

}  // namespace strata::analysis
