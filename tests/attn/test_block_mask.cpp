#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "strata/attn/pair_rules.h"
#include "random_calls.h"
#include "strata/attn/block_mask.h"

namespace strata::attn {
namespace {

AttentionCall call_of(std::int64_t heads, std::int64_t lq, std::int64_t prefix, std::int64_t lk) {
  AttentionCall call;
  call.q = torch::zeros({1, heads, lq, 2});
  call.k = torch::zeros({1, heads, prefix + lk, 2});
  call.v = call.k;
  call.prefix_len = prefix;
  return call;
}

// "." absent, "p" partial, "F" full: the key tiles of row (b, g, qt).
std::string tiles(const BlockMask& m, std::int64_t b, std::int64_t g, std::int64_t qt) {
  std::string s(m.k_tiles, '.');
  const std::int64_t r = m.row(b, g, qt);
  for (std::int64_t e = m.row_begin[r]; e < m.row_begin[r + 1]; ++e)
    s[m.tile[e]] = m.full[e] ? 'F' : 'p';
  return s;
}

TEST(BlockMask, SoundOnRandomCalls) {
  std::mt19937 rng(5);
  std::int64_t absent = 0, partial = 0, full = 0, joined = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto r = test::random_call(rng, {.max_len = 48});
    const std::int64_t q_tile = test::uniform(rng, 1, 9), k_tile = test::uniform(rng, 1, 9);
    const PairRules rules(r->call);
    const BlockMask m = compile_block_mask(rules, q_tile, k_tile);
    ASSERT_EQ(m.batch, rules.batch());
    ASSERT_EQ(m.lq, rules.queries());
    ASSERT_EQ(m.lk, rules.keys());
    // Query tiles cover the queries in order, at most q_tile wide.
    ASSERT_EQ(static_cast<std::int64_t>(m.query_start.size()), m.q_tiles + 1);
    ASSERT_EQ(m.query_start.front(), 0);
    ASSERT_EQ(m.query_start.back(), rules.queries());
    for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {
      ASSERT_GT(m.q_rows(qt), 0);
      ASSERT_LE(m.q_rows(qt), q_tile);
      ASSERT_EQ(m.q_tile_of(m.q_begin(qt) + m.q_rows(qt) - 1), qt);
    }
    // Key tiles cover the keys in order, at most k_tile wide, or kJoinedKeyTiles times that
    // where structure cuts the keys (BlockMask::k_tile is the widest); with prefix_block, none
    // mixes prefix groups or prefix slots and keys proper.
    ASSERT_EQ(static_cast<std::int64_t>(m.key_start.size()), m.k_tiles + 1);
    ASSERT_EQ(m.key_start.front(), 0);
    ASSERT_EQ(m.key_start.back(), rules.keys());
    std::int64_t widest = 0;
    bool blocking = false;
    for (const HeadSpec& h : r->spec.heads)
      blocking = blocking || (h.fixed == FixedPattern::None &&
                              to_string(h.mask).find("prefix_block") != std::string::npos);
    for (std::int64_t kt = 0; kt < m.k_tiles; ++kt) {
      const std::int64_t n0 = m.key_start[kt], n1 = m.key_start[kt + 1];
      ASSERT_LT(n0, n1);
      ASSERT_LE(n1 - n0, m.k_tile);
      widest = std::max(widest, n1 - n0);
      if (!blocking) continue;
      const std::int64_t prefix = rules.prefix_len();
      ASSERT_TRUE(n1 <= prefix || n0 >= prefix) << "a tile across prefix slots and keys";
      for (std::int64_t n = n0; n < std::min(n1, prefix); ++n)
        ASSERT_EQ(r->call.prefix_segment[n].item<std::int32_t>(),
                  r->call.prefix_segment[n0].item<std::int32_t>());
    }
    ASSERT_EQ(m.k_tile, std::max(widest, k_tile));
    ASSERT_LE(m.k_tile, kJoinedKeyTiles * k_tile);
    joined += m.k_tile > k_tile;
    ASSERT_EQ(static_cast<std::int64_t>(m.row_begin.size()), m.batch * m.groups * m.q_tiles + 1);
    ASSERT_EQ(static_cast<std::int64_t>(m.head_group.size()), rules.heads());
    for (std::int64_t h = 0; h < rules.heads(); ++h) {
      const std::int32_t g = m.head_group[h];
      ASSERT_EQ(g == -1, r->spec.head(h).fixed != FixedPattern::None);
      ASSERT_LT(g, m.groups);
      for (std::int64_t o = 0; o < h; ++o) {  // equal masks share a group, others do not
        if (g != -1 && m.head_group[o] != -1) {
          ASSERT_EQ(g == m.head_group[o], r->spec.head(h).mask == r->spec.head(o).mask);
        }
      }
    }
    for (std::int64_t b = 0; b < m.batch; ++b)
      for (std::int64_t h = 0; h < rules.heads(); ++h) {
        const std::int32_t g = m.head_group[h];
        if (g < 0) continue;
        for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {
          const std::string row = tiles(m, b, g, qt);
          const std::int64_t r0 = m.row(b, g, qt);
          for (std::int64_t e = m.row_begin[r0] + 1; e < m.row_begin[r0 + 1]; ++e)
            ASSERT_LT(m.tile[e - 1], m.tile[e]);
          for (std::int64_t kt = 0; kt < m.k_tiles; ++kt) {
            bool any = false, all = true;
            for (std::int64_t i = m.q_begin(qt); i < m.q_begin(qt) + m.q_rows(qt); ++i)
              for (std::int64_t n = m.key_start[kt]; n < m.key_start[kt + 1]; ++n) {
                const bool v = rules.visible(b, h, i, n);
                any |= v;
                all &= v;
              }
            const char c = row[kt];
            absent += c == '.';
            partial += c == 'p';
            full += c == 'F';
            ASSERT_TRUE(c != '.' || !any) << "absent tile with a visible pair: trial " << trial
                                          << " mask " << to_string(r->spec.head(h).mask);
            ASSERT_TRUE(c != 'F' || all) << "full tile with a hidden pair: trial " << trial
                                         << " mask " << to_string(r->spec.head(h).mask);
          }
        }
      }
  }
  // Summaries decide a good share of tiles without the predicate.
  EXPECT_GT(absent, (absent + partial + full) / 10);
  EXPECT_GT(full, (absent + partial + full) / 10);
  EXPECT_GT(joined, 10) << "calls whose key tiles joined a span's pieces";
}

TEST(BlockMask, WindowSkipsFarTiles) {
  AttentionCall call = call_of(1, 256, 0, 256);
  LayerSpec spec;
  spec.heads[0].mask = Mask::window(4, 4);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 16, 16);
  EXPECT_EQ(m.groups, 1);
  EXPECT_EQ(tiles(m, 0, 0, 0), "pp..............");
  EXPECT_EQ(tiles(m, 0, 0, 5), "....ppp.........");
  EXPECT_EQ(tiles(m, 0, 0, 15), "..............pp");
  EXPECT_DOUBLE_EQ(m.tile_density(), 46.0 / 256.0);
}

TEST(BlockMask, BlocksVisitTheirOwnAndThePreviousBlockOnly) {
  // SLIDE over 128 tokens in blocks of 32: each query tile of 16 sees 32 to 64 keys.
  AttentionCall call = call_of(1, 128, 0, 128);
  call.causal = true;
  LayerSpec spec;
  spec.heads[0].mask = Mask::blocks(32, 1);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 16, 16);
  EXPECT_EQ(tiles(m, 0, 0, 0), "p.......");
  EXPECT_EQ(tiles(m, 0, 0, 1), "Fp......");
  EXPECT_EQ(tiles(m, 0, 0, 2), "FFp.....");
  EXPECT_EQ(tiles(m, 0, 0, 5), "..FFFp..");
  EXPECT_EQ(tiles(m, 0, 0, 7), "....FFFp");
  // A tile that straddles a block boundary is partial on its oldest keys.
  EXPECT_EQ(tiles(compile_block_mask(call, 24, 24), 0, 0, 2), "ppp...");
  // Decoding past a cache: the same tiles as the full pass's last row.
  AttentionCall decode = call_of(1, 16, 0, 128);
  decode.causal = true;
  decode.query_offset = 112;
  decode.spec = &spec;
  EXPECT_EQ(tiles(compile_block_mask(decode, 16, 16), 0, 0, 0), "....FFFp");
}

TEST(BlockMask, CausalFlagGivesFullTilesBelowTheDiagonal) {
  AttentionCall call = call_of(1, 64, 0, 64);
  call.causal = true;
  const BlockMask m = compile_block_mask(call, 16, 16);  // null spec: one plain group
  EXPECT_EQ(tiles(m, 0, 0, 0), "p...");
  EXPECT_EQ(tiles(m, 0, 0, 2), "FFp.");
  EXPECT_EQ(tiles(m, 0, 0, 3), "FFFp");
  // Decoding 16 queries after 48 cached keys: every earlier tile is full.
  AttentionCall decode = call_of(1, 16, 0, 64);
  decode.causal = true;
  decode.query_offset = 48;
  EXPECT_EQ(tiles(compile_block_mask(decode, 16, 16), 0, 0, 0), "FFFp");
}

TEST(BlockMask, LongSectionsGiveFullTiles) {
  std::vector<std::int32_t> sections;
  for (int s = 0; s < 4; ++s) sections.insert(sections.end(), 32, s);
  TokenLayout layout;
  layout.section = torch::tensor(sections, torch::kInt32).view({1, -1});
  AttentionCall call = call_of(1, 128, 0, 128);
  call.query_layout = call.key_layout = &layout;
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::SameSection);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 16, 16);
  // Queries in tiles of 16; a section's two key pieces joined into one key tile.
  EXPECT_EQ(m.key_start, (std::vector<std::int64_t>{0, 32, 64, 96, 128}));
  EXPECT_EQ(tiles(m, 0, 0, 0), "F...");
  EXPECT_EQ(tiles(m, 0, 0, 5), "..F.");
  EXPECT_DOUBLE_EQ(m.tile_density(), 0.25);
  // Key tiles of 24 restart at each section (0 24 32 56 ...) before the join, so even the
  // negation finds every tile full or absent.
  spec.heads[0].mask = !Mask::of(MaskKind::SameSection);
  EXPECT_EQ(tiles(compile_block_mask(call, 16, 24), 0, 0, 1), ".FFF");
}

// Ids 0, 1, 2, ... in spans of `lengths` tokens: one batch item's field.
at::Tensor spans(const std::vector<int>& lengths) {
  std::vector<std::int32_t> ids;
  for (std::size_t s = 0; s < lengths.size(); ++s) ids.insert(ids.end(), lengths[s], static_cast<std::int32_t>(s));
  return torch::tensor(ids, torch::kInt32).view({1, -1});
}

// Self-attention over the layout's tokens, every head under `mask`.
struct SelfCall {
  SelfCall(TokenLayout layout_in, Mask mask) : layout(std::move(layout_in)) {
    call = call_of(1, layout.length(), 0, layout.length());
    call.q = torch::zeros({layout.batch(), 1, layout.length(), 2});
    call.k = call.v = call.q;
    call.query_layout = call.key_layout = &layout;
    spec.heads[0].mask = std::move(mask);
    call.spec = &spec;
  }
  SelfCall(const SelfCall&) = delete;
  TokenLayout layout;
  LayerSpec spec;
  AttentionCall call;
};

// Sections that do not fall on the grid: tiles are cut where the section changes, so every
// visited tile of same_section is full and the tiles hold exactly the visible pairs.
TEST(BlockMask, TilesCutAtSectionBoundaries) {
  SelfCall self({.section = spans({30, 45, 25})}, Mask::of(MaskKind::SameSection));
  const BlockMask m = compile_block_mask(self.call, 16, 16);
  // Queries: a grid of 16 restarted at 30 and 75; keys: each section's pieces joined.
  EXPECT_EQ(m.query_start, (std::vector<std::int64_t>{0, 16, 30, 46, 62, 75, 91, 100}));
  EXPECT_EQ(m.key_start, (std::vector<std::int64_t>{0, 30, 75, 100}));
  EXPECT_EQ(m.k_tile, 45);
  EXPECT_EQ(tiles(m, 0, 0, 0), "F..");
  EXPECT_EQ(tiles(m, 0, 0, 3), ".F.");
  EXPECT_EQ(tiles(m, 0, 0, 6), "..F");
  EXPECT_EQ(m.partial_density(), 0.0);
  EXPECT_DOUBLE_EQ(m.tile_density(), (30.0 * 30 + 45 * 45 + 25 * 25) / (100 * 100));
  EXPECT_EQ(m.q_tile_of(29), 1);
  EXPECT_EQ(m.q_tile_of(30), 2);
  // A plain mask with no field to compare keeps the grid.
  self.spec.heads[0].mask = Mask::window(8, 8);
  EXPECT_EQ(compile_block_mask(self.call, 16, 16).query_start,
            (std::vector<std::int64_t>{0, 16, 32, 48, 64, 80, 96, 100}));
}

// Sections shorter than a tile are packed whole into one; a long one restarts the grid.
TEST(BlockMask, ShortSectionsPackedWholeIntoTiles) {
  SelfCall self({.sentence = spans({5, 5, 5, 20, 3})}, Mask::of(MaskKind::SameSentence));
  const BlockMask m = compile_block_mask(self.call, 16, 16);
  EXPECT_EQ(m.query_start, (std::vector<std::int64_t>{0, 15, 31, 38}));
  // The packed tile sees its own three sentences: partial on its own tile only.
  EXPECT_EQ(tiles(m, 0, 0, 0), "p..");
  EXPECT_EQ(tiles(m, 0, 0, 1), ".Fp");
}

// A section longer than a tile is cut into query tiles of 64, but its pieces are joined into
// key tiles of up to 3 x 64 (fewer, wider tile products), each inside one section; spans
// packed whole into a tile keep the queries' tiling, and without a field to cut at the keys
// keep the grid.
TEST(BlockMask, KeyTilesJoinALongSpansPieces) {
  SelfCall sections({.section = spans({146, 300, 100})}, Mask::of(MaskKind::SameSection));
  const BlockMask m = compile_block_mask(sections.call);
  EXPECT_EQ(m.query_start, (std::vector<std::int64_t>{0, 64, 128, 146, 210, 274, 338, 402, 446, 510, 546}));
  EXPECT_EQ(m.key_start, (std::vector<std::int64_t>{0, 146, 338, 446, 546}));
  EXPECT_EQ(m.q_tile, 64);
  EXPECT_EQ(m.k_tile, 192);
  EXPECT_EQ(tiles(m, 0, 0, 2), "F...");
  EXPECT_EQ(tiles(m, 0, 0, 3), ".FF.");
  EXPECT_EQ(tiles(m, 0, 0, 9), "...F");
  EXPECT_EQ(m.partial_density(), 0.0);

  SelfCall sentences({.sentence = spans(std::vector<int>(8, 24))}, Mask::of(MaskKind::SameSentence));
  const BlockMask packed = compile_block_mask(sentences.call);
  EXPECT_EQ(packed.query_start, (std::vector<std::int64_t>{0, 48, 96, 144, 192}));
  EXPECT_EQ(packed.key_start, packed.query_start);
  EXPECT_EQ(tiles(packed, 0, 0, 1), ".p..");

  sections.spec.heads[0].mask = Mask::window(8, 8);
  const BlockMask grid = compile_block_mask(sections.call);
  EXPECT_EQ(grid.key_start, (std::vector<std::int64_t>{0, 64, 128, 192, 256, 320, 384, 448, 512, 546}));
  EXPECT_EQ(grid.k_tile, 64);
}

// Tiles are shared by the batch: only a boundary every item has cuts them.
TEST(BlockMask, OnlyBoundariesSharedByTheBatchCutTiles) {
  TokenLayout layout;
  std::vector<std::int32_t> sections(2 * 40, 0);
  for (int j = 10; j < 40; ++j) sections[j] = j < 25 ? 1 : 2;       // item 0: 10 | 15 | 15
  for (int j = 25; j < 40; ++j) sections[40 + j] = 1;                 // item 1: 25 | 15
  layout.section = torch::tensor(sections, torch::kInt32).view({2, 40});
  const SelfCall self(layout, Mask::of(MaskKind::SameSection));
  EXPECT_EQ(compile_block_mask(self.call, 16, 16).query_start,
            (std::vector<std::int64_t>{0, 16, 25, 40}));
}

TEST(BlockMask, PaddingAndPrefixTiles) {
  // 4 prefix slots (segments 0 0 1 1), then 20 real keys and 20 padding keys.
  TokenLayout layout;
  std::vector<std::int32_t> segment(16, 0);
  std::fill(segment.begin() + 8, segment.end(), 1);
  layout.segment = torch::tensor(segment, torch::kInt32).view({1, -1});
  AttentionCall call = call_of(1, 16, 4, 40);
  call.query_layout = &layout;
  call.prefix_segment = torch::tensor({0, 0, 1, 1}, torch::kInt32);
  call.key_padding = torch::arange(40).lt(20).view({1, 40});
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 8, 2);
  // Key tiles: 0-1 the prefix pairs, 2-11 real keys, 12-21 padding.
  EXPECT_EQ(tiles(m, 0, 0, 0), "F.FFFFFFFFFF..........");
  EXPECT_EQ(tiles(m, 0, 0, 1), ".FFFFFFFFFFF..........");
  // Wider tiles: prefix_block cuts the prefix slots by group and starts the keys proper at P,
  // [0, 2) [2, 4) [4, 9) ... [39, 44); one tile across real keys and padding is partial.
  const BlockMask wide = compile_block_mask(call, 8, 5);
  EXPECT_EQ(wide.key_start, (std::vector<std::int64_t>{0, 2, 4, 9, 14, 19, 24, 29, 34, 39, 44}));
  EXPECT_EQ(tiles(wide, 0, 0, 0), "F.FFFF....");
  EXPECT_EQ(tiles(wide, 0, 0, 1), ".FFFFF....");
  // Without prefix_block the tiles are k_tile steps over prefix slots and keys alike.
  spec.heads[0].mask = Mask::all();
  const BlockMask plain = compile_block_mask(call, 8, 5);
  EXPECT_EQ(plain.key_start, (std::vector<std::int64_t>{0, 5, 10, 15, 20, 25, 30, 35, 40, 44}));
  EXPECT_EQ(tiles(plain, 0, 0, 0), "FFFFp....");
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock) && Mask::window(3, 3);
  // Queries 8-15 under window(3, 3) see keys 5-18: three partial tiles.
  EXPECT_EQ(tiles(compile_block_mask(call, 8, 5), 0, 0, 1), ".F.ppp....");
}

// prefix_block cuts the prefix slots wherever their group changes, however the groups lie,
// and each query tile of one segment sees its group's tiles whole and skips the others.
TEST(BlockMask, PrefixTilesOneGroupEach) {
  TokenLayout layout;
  layout.segment = torch::tensor({0, 0, 1, 1, 2, 2}, torch::kInt32).view({1, -1});
  AttentionCall call = call_of(1, 6, 5, 6);
  call.query_layout = &layout;
  call.prefix_segment = torch::tensor({0, 2, 1, 1, 1}, torch::kInt32);
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 2, 2);
  // Slots {0} {2} {1 1} {1}, then the keys proper in twos.
  EXPECT_EQ(m.key_start, (std::vector<std::int64_t>{0, 1, 2, 4, 5, 7, 9, 11}));
  EXPECT_EQ(tiles(m, 0, 0, 0), "F...FFF");
  EXPECT_EQ(tiles(m, 0, 0, 1), "..FFFFF");
  EXPECT_EQ(tiles(m, 0, 0, 2), ".F..FFF");
  // A query tile across segments 0 and 1 (tiles of 4 queries: ids 0 0 1 1): groups 0 and 1
  // partial, group 2 absent.
  EXPECT_EQ(tiles(compile_block_mask(call, 4, 2), 0, 0, 0), "p.ppFFF");
}

// The benchmark's geometry (strata bench prefix): 1024 tokens in 3 segments, 100 prefix slots
// in 3 groups of 34, 33 and 33, 64-wide tiles: one prefix tile per group, the keys proper from
// 100 on. A query tile of one segment visits its group's tile and the 16 key tiles, all full,
// 1057 keys of 1124; one across two segments visits both groups' tiles, partial.
TEST(BlockMask, PrefixBlockSkipsOtherGroupsTiles) {
  const std::int64_t length = 1024, prefix = 100;
  TokenLayout layout;
  layout.segment = torch::arange(length).mul(3).div(length, "floor").to(torch::kInt32).view({1, -1});
  AttentionCall call = call_of(1, length, prefix, length);
  call.query_layout = &layout;
  call.prefix_segment = torch::arange(prefix).mul(3).div(prefix, "floor").to(torch::kInt32);
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call);
  ASSERT_EQ(m.k_tiles, 19);
  EXPECT_EQ(std::vector<std::int64_t>(m.key_start.begin(), m.key_start.begin() + 5),
            (std::vector<std::int64_t>{0, 34, 67, 100, 164}));
  const std::string keys(16, 'F');
  EXPECT_EQ(tiles(m, 0, 0, 0), "F.." + keys);   // segment 0
  EXPECT_EQ(tiles(m, 0, 0, 6), ".F." + keys);   // segment 1
  EXPECT_EQ(tiles(m, 0, 0, 15), "..F" + keys);  // segment 2
  EXPECT_EQ(tiles(m, 0, 0, 5), "pp." + keys);   // queries 320-383: segments 0 and 1
  EXPECT_EQ(tiles(m, 0, 0, 10), ".pp" + keys);  // queries 640-703: segments 1 and 2
}

TEST(BlockMask, HeadsWithEqualMasksShareAGroup) {
  AttentionCall call = call_of(5, 8, 0, 8);
  LayerSpec spec;
  spec.heads = std::vector<HeadSpec>(5);
  spec.heads[0].mask = spec.heads[1].mask = Mask::window(1, 1);
  spec.heads[2].mask = Mask::causal();
  spec.heads[3].fixed = FixedPattern::PreviousToken;
  spec.heads[4].mask = Mask::window(1, 1);
  spec.heads[4].normaliser.kind = NormaliserKind::Gumbel;  // normalisers do not split groups
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 4, 4);
  EXPECT_EQ(m.groups, 2);
  EXPECT_EQ(m.head_group, (std::vector<std::int32_t>{0, 0, 1, -1, 0}));
  EXPECT_EQ(tiles(m, 0, 1, 1), "Fp");
}

TEST(BlockMask, UniqueTokensSeeEverything) {
  TokenLayout layout;
  layout.token = torch::tensor({1, 2, 3, 4, 5, 5, 6, 5}, torch::kInt32).view({1, -1});
  layout.repeated = torch::tensor({0, 0, 0, 0, 1, 1, 0, 1}, torch::kInt32).view({1, -1});
  AttentionCall call = call_of(1, 8, 0, 8);
  call.query_layout = call.key_layout = &layout;
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::MatchingToken);
  call.spec = &spec;
  const BlockMask m = compile_block_mask(call, 4, 4);
  EXPECT_EQ(tiles(m, 0, 0, 0), "FF");
  EXPECT_EQ(tiles(m, 0, 0, 1), "pp");
}

}  // namespace
}  // namespace strata::attn
