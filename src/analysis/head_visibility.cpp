#include "strata/analysis/head_visibility.h"

#include <algorithm>
#include <vector>

#include "strata/attn/pair_rules.h"

namespace strata::analysis {

void for_each_visible_row(const attn::PairRules& rules, std::int64_t b, std::int64_t h,
                          const std::function<void(std::int64_t, const std::uint8_t*)>& on_row) {
  constexpr std::int64_t kRows = 64;  // queries evaluated together by visible_tile
  const std::int64_t queries = rules.queries(), keys = rules.keys();
  std::vector<std::uint8_t> tile(static_cast<std::size_t>(kRows * keys));
  for (std::int64_t i0 = 0; i0 < queries; i0 += kRows) {
    const std::int64_t i1 = std::min(queries, i0 + kRows);
    rules.visible_tile(b, h, i0, i1, 0, keys, tile.data(), keys);
    for (std::int64_t i = i0; i < i1; ++i) on_row(i, tile.data() + (i - i0) * keys);
  }
}

}  // namespace strata::analysis
