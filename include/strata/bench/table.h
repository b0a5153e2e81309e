#pragma once
// A benchmark's human table: a header line, then a line a row, cells separated by a space,
// each padded to its column's width: right-aligned, or left-aligned for a negative width
// (printf's convention).
#include <string>
#include <utility>
#include <vector>

namespace strata::bench {

class Table {
 public:
  explicit Table(std::vector<std::pair<std::string, int>> columns) : columns_(std::move(columns)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print() const;

 private:
  std::vector<std::pair<std::string, int>> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// `value` in fixed notation with `precision` decimals.
std::string fixed(double value, int precision);

}  // namespace strata::bench
