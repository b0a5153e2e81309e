#pragma once
// Seed 001 Figure 5 drawn from a BiasMatrix: query sections on rows, key sections on columns,
// each cell shaded by its learned bias (blue positive, orange negative, white at 0, intensity
// proportional to |value| on a scale symmetric around 0) with the value × 100 printed in it.
#include <string>

#include "strata/analysis/bias_matrix.h"

namespace strata::analysis {

// A value × 100 with one decimal, never "-0.0": 0.01234 -> "1.2".
std::string hundredfold(float value);

// A standalone SVG: title, section labels ("§1.1") on both axes, one shaded cell per pair with
// its value × 100 and a tooltip (pair, relation, raw value), a colour bar from -max to +max
// and the legend line. The same matrix and title give the same bytes.
std::string bias_svg(const BiasMatrix& matrix, const std::string& title);

// A PNG of the shading alone: 32 × 32 px per cell, 1-px grey grid lines, a palette of 63
// blue and 63 orange shades besides white; no text.
std::string bias_png(const BiasMatrix& matrix);

}  // namespace strata::analysis
