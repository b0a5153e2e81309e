#include "strata/bench/table.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace strata::bench {

void Table::print() const {
  const auto line = [this](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = c < cells.size() ? cells[c] : std::string();
      const int width = columns_[c].second;
      if (c > 0) text += ' ';
      text += width < 0 ? fmt::format("{:<{}}", cell, -width) : fmt::format("{:>{}}", cell, width);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    std::printf("%s\n", text.c_str());
  };
  std::vector<std::string> header;
  for (const auto& column : columns_) header.push_back(column.first);
  line(header);
  for (const auto& cells : rows_) line(cells);
}

std::string fixed(double value, int precision) { return fmt::format("{:.{}f}", value, precision); }

}  // namespace strata::bench
