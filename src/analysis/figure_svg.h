#pragma once
// The opening every SVG figure of the analyses shares: the document element, the title, a
// white background and the title drawn centred across the top.
#include <cstdint>
#include <string>

namespace strata::analysis {

// xlink: declare the xlink namespace (for figures that embed PNG rasters with <image>).
std::string svg_head(std::int64_t width, std::int64_t height, const std::string& title, bool xlink = false);

}  // namespace strata::analysis
