#pragma once
// One head's visibility, row by row, by the engine's own per-pair rule (PairRules: what the
// reference kernel applies and the fused kernel is tested against), as `strata attn show`
// draws it.
#include <cstdint>
#include <functional>

namespace strata::attn {
class PairRules;
}

namespace strata::analysis {

// Calls on_row(i, keys) for every query i of (batch item b, head h) in order, where keys[n]
// is 1 when query i sees key n and 0 otherwise (P + Lk entries, prefix slots first). A head
// with a fixed pattern sees its one fixed key, or none (PairRules' rule).
void for_each_visible_row(const attn::PairRules& rules, std::int64_t b, std::int64_t h,
                          const std::function<void(std::int64_t, const std::uint8_t*)>& on_row);

}  // namespace strata::analysis
