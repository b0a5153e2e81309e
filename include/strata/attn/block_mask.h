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

// Where structure cuts the keys, the pieces of one long span are joined into key tiles of up
// to this many grid tiles (see BlockMask).
inline constexpr std::int64_t kJoinedKeyTiles = 3;

struct BlockMask {
  // The widest a query tile may be; the grid's key width, or the widest key tile made where
  // joined tiles are wider (up to kJoinedKeyTiles times the grid, where structure cuts keys).
  std::int64_t q_tile = 64, k_tile = 64;
  std::int64_t batch = 0, groups = 0, q_tiles = 0, k_tiles = 0;
  std::int64_t lq = 0, lk = 0;  // queries; keys including the P prefix slots
  // Query tile qt covers queries [query_start[qt], query_start[qt + 1]) (q_tiles + 1 entries,
  // the last lq), at most q_tile wide. Key tile kt covers keys [key_start[kt], key_start[kt +
  // 1]) (k_tiles + 1 entries, the last lk), at most k_tile wide. Both are a grid of full-width
  // tiles, except:
  // - where a mask compares a layout field by equality (same_section, ...) or the bias is
  //   section-level, tiles are cut where that field changes in every item of the batch, so a
  //   tile lies inside one section and meets another section's tiles whole (full or absent)
  //   instead of partially. A section longer than a tile is cut on the grid, its last piece
  //   shorter; sections shorter than one are packed whole into one tile. On the keys, a long
  //   section's pieces are then joined into tiles of up to kJoinedKeyTiles grid tiles.
  // - when a mask blocks prefix slots (prefix_block), the P slots are cut at every change of
  //   segment group and the keys proper start a tile of their own at P, so that a query tile
  //   of one segment skips the other groups' slots whole.
  std::vector<std::int64_t> query_start;
  std::vector<std::int64_t> key_start;
  std::vector<std::int32_t> head_group;  // [H] -> group; -1 for heads with a fixed pattern
  // CSR over rows (b, g, qt): entries row_begin[r] .. row_begin[r + 1] - 1, key tiles ascending.
  std::vector<std::int64_t> row_begin;
  std::vector<std::int32_t> tile;
  std::vector<std::uint8_t> full;

  std::int64_t row(std::int64_t b, std::int64_t g, std::int64_t qt) const {
    return (b * groups + g) * q_tiles + qt;
  }
  std::int64_t q_begin(std::int64_t qt) const { return query_start[qt]; }
  std::int64_t q_rows(std::int64_t qt) const { return query_start[qt + 1] - query_start[qt]; }
  std::int64_t k_begin(std::int64_t kt) const { return key_start[kt]; }
  std::int64_t k_cols(std::int64_t kt) const { return key_start[kt + 1] - key_start[kt]; }
  // The query tile that holds query i (0 <= i < lq).
  std::int64_t q_tile_of(std::int64_t i) const;
  // The pairs inside visited tiles (full + partial; only partial ones) over all pairs, for
  // head group g (every group when g < 0), over the batch: what the kernel computes, as a
  // share of dense.
  double tile_density(std::int64_t g = -1) const;
  double partial_density(std::int64_t g = -1) const;
};

BlockMask compile_block_mask(const AttentionCall& call, std::int64_t q_tile = 64,
                             std::int64_t k_tile = 64);

// The block mask the fused kernel compiles for a call that brings none: 64 x 64 tiles, or
// kWideQueryTile-query tiles where a query tile's row averages kWideRowKeys keys or more. A
// query tile reads its row's K and V once, and its backward adds once to their rows of dK and
// dV; past a few thousand keys those no longer stay in cache from one query tile to the next,
// and a 4x taller tile makes 4x fewer passes. Dense fwd + bwd, 8 heads x 64 on Zen 3, rounds
// alternating in one process: L = 16,384 13 % faster, 4,096 3-7 %, 2,048 and 1,024 2-3 % slower (so short
// rows keep 64). Heads with a top-p normaliser keep 64: its first step holds a query tile's
// whole row of scores. So do calls that would be left fewer than kTasksPerThread forward
// tasks (item, head, query tile) a thread, and calls of at most 64 queries (a decoding step),
// whose one tile is the same either way.
inline constexpr std::int64_t kWideRowKeys = 4096;
inline constexpr std::int64_t kWideQueryTile = 256;
// The key width of those tall tiles: a whole number of the tile products' column bands. On a
// CPU whose micro-kernel is AVX2 (bands of 16 columns) 96 keys, which ran dense fwd + bwd 3-8 %
// faster than 64 at L = 2,048-16,384 on Zen 3 (rounds alternating in one process; 80, 112, 128
// and 192 were no better); elsewhere 64 (the AVX-512 kernel's bands are 64 wide; wider was not
// measured there).
std::int64_t wide_key_tile();
inline constexpr std::int64_t kTasksPerThread = 4;
BlockMask fused_block_mask(const AttentionCall& call);

}  // namespace strata::attn
