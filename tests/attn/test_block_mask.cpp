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
  std::int64_t absent = 0, partial = 0, full = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto r = test::random_call(rng, {.max_len = 48});
    const std::int64_t q_tile = test::uniform(rng, 1, 9), k_tile = test::uniform(rng, 1, 9);
    const PairRules rules(r->call);
    const BlockMask m = compile_block_mask(rules, q_tile, k_tile);
    ASSERT_EQ(m.batch, rules.batch());
    ASSERT_EQ(m.lq, rules.queries());
    ASSERT_EQ(m.lk, rules.keys());
    ASSERT_EQ(m.q_tiles, (rules.queries() + q_tile - 1) / q_tile);
    ASSERT_EQ(m.k_tiles, (rules.keys() + k_tile - 1) / k_tile);
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
            for (std::int64_t i = qt * q_tile; i < std::min((qt + 1) * q_tile, m.lq); ++i)
              for (std::int64_t n = kt * k_tile; n < std::min((kt + 1) * k_tile, m.lk); ++n) {
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
  EXPECT_EQ(tiles(m, 0, 0, 0), "FF......");
  EXPECT_EQ(tiles(m, 0, 0, 5), "....FF..");
  EXPECT_DOUBLE_EQ(m.tile_density(), 0.25);
  // Sections that change inside a tile make it partial, never wrong.
  spec.heads[0].mask = !Mask::of(MaskKind::SameSection);
  EXPECT_EQ(tiles(compile_block_mask(call, 16, 24), 0, 0, 1), ".pFFFF");
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
  // A tile across the prefix and the keys proper, and one across real keys and padding.
  EXPECT_EQ(tiles(compile_block_mask(call, 8, 5), 0, 0, 0), "pFFFp....");
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
