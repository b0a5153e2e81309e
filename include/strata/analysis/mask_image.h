#pragma once
// A picture of one attention head's visibility: a rows × cols grid (queries × keys) whose
// visible cells are dark, stored as runs per row so that a band or a block diagonal costs a
// few runs a row, not one entry per pair; lines mark boundaries (sections, the prefix).
#include <cstdint>
#include <string>
#include <vector>

namespace strata::analysis {

struct MaskImage {
  struct Run {
    std::int32_t begin, end;  // visible columns [begin, end)
  };
  std::int64_t rows = 0, cols = 0;
  // The initializers let callers name only some fields without -Wextra's warning.
  std::vector<std::vector<Run>> runs{};  // per row, ascending, not touching
  std::vector<std::int64_t> row_lines{};  // a line above each of these rows
  std::vector<std::int64_t> col_lines{};  // a line left of each of these columns
  std::string title{};

  // Appends row `runs.size()` from `visible` (cols bytes, nonzero = visible).
  void add_row(const std::uint8_t* visible);
};

// A standalone SVG: one rect per run (consecutive rows with equal runs share it), boundary
// lines on top, shown with its longer side 768 px whatever the grid size.
std::string mask_svg(const MaskImage& image);

// A PNG with one pixel per cell: visible dark, hidden white, boundary lines tinted.
std::string mask_png(const MaskImage& image);

}  // namespace strata::analysis
