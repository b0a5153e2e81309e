#pragma once
// The block mask: for each (batch item, head group, query tile) the key tiles that some pair
// can see, each marked full (every pair visible: the kernel skips the predicate) or partial
// (the kernel evaluates the predicate per pair). Tiles that no pair can see are absent, so
// the kernel never touches them. Heads whose masks are equal share one group.
//
// Compiled from the call's shapes, flags, layouts and spec by summarising each tile (id
// ranges) and classifying every (query tile, key tile) from the summaries alone: the cost is
// linear in the number of tiles, not in the number of pairs.
#include <cstdint>
#include <vector>

namespace strata::attn {

struct AttentionCall;

struct BlockMask {
  std::int64_t q_tile = 64, k_tile = 64;  // tile extents (the last tile may be shorter)
  std::int64_t batch = 0, groups = 0, q_tiles = 0, k_tiles = 0;
  std::int64_t lq = 0, lk = 0;  // queries; keys including the P prefix slots
  // Key tile kt covers keys [key_start[kt], key_start[kt + 1]) (k_tiles + 1 entries, the last
  // lk), at most k_tile wide: key_start[kt] = kt * k_tile, except when a mask blocks prefix slots
  // (prefix_block), where the P slots are cut at every change of segment group and the keys
  // proper start a tile of their own at P, so that a query tile of one segment skips the
  // other groups' slots whole.
  std::vector<std::int64_t> key_start;
  std::vector<std::int32_t> head_group;  // [H] -> group; -1 for heads with a fixed pattern
  // CSR over rows (b, g, qt): entries row_begin[r] .. row_begin[r + 1] - 1, key tiles ascending.
  std::vector<std::int64_t> row_begin;
  std::vector<std::int32_t> tile;
  std::vector<std::uint8_t> full;

  std::int64_t row(std::int64_t b, std::int64_t g, std::int64_t qt) const {
    return (b * groups + g) * q_tiles + qt;
  }
  // Visited tiles (full + partial) over all tiles, per group and batch item together.
  double tile_density() const;
};

BlockMask compile_block_mask(const AttentionCall& call, std::int64_t q_tile = 64,
                             std::int64_t k_tile = 64);

}  // namespace strata::attn
