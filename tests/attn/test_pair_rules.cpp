#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <random>
#include <set>
#include <string>

#include "strata/attn/pair_rules.h"
#include "random_calls.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

using test_support::error_of;

at::Tensor ids(std::vector<std::int32_t> values) {
  return torch::tensor(values, torch::kInt32).view({1, -1});
}

// One batch item, one head; Lq queries over P prefix slots and Lk keys.
AttentionCall call_of(std::int64_t lq, std::int64_t prefix, std::int64_t lk) {
  AttentionCall call;
  call.q = torch::zeros({1, 1, lq, 2});
  call.k = torch::zeros({1, 1, prefix + lk, 2});
  call.v = call.k;
  call.prefix_len = prefix;
  return call;
}

// Row i of visibility over every key, as a string of 0/1.
std::string row(const PairRules& rules, std::int64_t i, std::int64_t h = 0, std::int64_t b = 0) {
  std::string s;
  for (std::int64_t n = 0; n < rules.keys(); ++n) s += rules.visible(b, h, i, n) ? '1' : '0';
  return s;
}

TEST(PairRules, ElementRuleOnHandExamples) {
  TokenLayout layout;
  layout.sentence = ids({0, 0, 1, 1, 2});
  layout.segment = ids({0, 0, 0, 1, 1});
  layout.token = ids({5, 6, 5, 7, 6});
  layout.repeated = ids({1, 1, 1, 0, 1});
  AttentionCall call = call_of(5, 2, 5);
  call.query_layout = call.key_layout = &layout;
  call.prefix_segment = torch::tensor({0, 1}, torch::kInt32);
  LayerSpec spec;
  call.spec = &spec;

  spec.heads[0].mask = Mask::of(MaskKind::SameSentence);
  EXPECT_EQ(row(PairRules(call), 1),
            "11"
            "11000");  // prefix slots stay visible
  EXPECT_EQ(row(PairRules(call), 4),
            "11"
            "00001");

  spec.heads[0].mask = !Mask::causal();  // NOT as written: hides prefix slots too
  EXPECT_EQ(row(PairRules(call), 2),
            "00"
            "00011");

  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  EXPECT_EQ(row(PairRules(call), 0),
            "10"
            "11111");
  EXPECT_EQ(row(PairRules(call), 3),
            "01"
            "11111");

  spec.heads[0].mask = Mask::of(MaskKind::MatchingToken);
  EXPECT_EQ(row(PairRules(call), 0),
            "11"
            "10100");  // token 5 sees the 5s
  EXPECT_EQ(row(PairRules(call), 3),
            "11"
            "11111");  // token 7 occurs once: sees all

  spec.heads[0].mask = Mask::global(1);
  EXPECT_EQ(row(PairRules(call), 0),
            "11"
            "11111");
  EXPECT_EQ(row(PairRules(call), 3),
            "11"
            "10000");

  // A query of segment 1 sees every key; one of segment 0 its window.
  spec.heads[0].mask = Mask::window(1, 0) || Mask::query_segment(1);
  EXPECT_EQ(row(PairRules(call), 1),
            "11"
            "11000");
  EXPECT_EQ(row(PairRules(call), 3),
            "11"
            "11111");

  spec.heads[0].mask = Mask::window(1, 0) && !Mask::of(MaskKind::PrefixBlock);
  EXPECT_EQ(row(PairRules(call), 3),
            "10"
            "00000");  // only the prefix slot it is blocked from

  // The call's causal flag and padding on top, with a query offset: queries 0, 1 are keys 2, 3.
  spec.heads[0].mask = Mask::window(1, 0) || Mask::global(1);
  AttentionCall decode = call_of(2, 2, 5);
  decode.spec = &spec;
  decode.query_offset = 2;
  decode.causal = true;
  decode.key_padding = torch::tensor({true, true, true, false, true}).view({1, 5});
  EXPECT_EQ(row(PairRules(decode), 0),
            "11"
            "11100");
  EXPECT_EQ(row(PairRules(decode), 1),
            "11"
            "10100");  // key 3 is padding
}

// A random tile [i0, i1) x [n0, n1) of one (batch item, head) of a random call.
struct RandomTile {
  int trial;
  const test::RandomCall& call;
  const PairRules& rules;
  std::int64_t b, h, i0, i1, n0, n1;
  std::string where(std::int64_t i, std::int64_t n) const {
    return "trial " + std::to_string(trial) + " b " + std::to_string(b) + " h " + std::to_string(h) + " i " +
           std::to_string(i) + " n " + std::to_string(n) + " mask " + to_string(call.spec.head(h).mask);
  }
};

// check(tile) on a random tile of every (batch item, head) of `trials` random calls, until a
// check fails.
template <class Check>
void for_random_tiles(unsigned seed, int trials, const Check& check) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    const auto r = test::random_call(rng);
    const PairRules rules(r->call);
    for (std::int64_t b = 0; b < rules.batch(); ++b)
      for (std::int64_t h = 0; h < rules.heads(); ++h) {
        const std::int64_t i0 = test::uniform(rng, 0, rules.queries() - 1);
        const std::int64_t i1 = test::uniform(rng, i0 + 1, rules.queries());
        const std::int64_t n0 = test::uniform(rng, 0, rules.keys() - 1);
        const std::int64_t n1 = test::uniform(rng, n0 + 1, rules.keys());
        check(RandomTile{trial, *r, rules, b, h, i0, i1, n0, n1});
        if (::testing::Test::HasFatalFailure()) return;
      }
  }
}

TEST(PairRules, VisibleTileMatchesElementRule) {
  for_random_tiles(7, 150, [](const RandomTile& t) {
    const std::int64_t ld = t.n1 - t.n0 + 3;
    std::vector<std::uint8_t> tile((t.i1 - t.i0) * ld, 7);
    t.rules.visible_tile(t.b, t.h, t.i0, t.i1, t.n0, t.n1, tile.data(), ld);
    for (std::int64_t i = t.i0; i < t.i1; ++i) {
      for (std::int64_t n = t.n0; n < t.n1; ++n)
        ASSERT_EQ(tile[(i - t.i0) * ld + n - t.n0], t.rules.visible(t.b, t.h, i, n) ? 1 : 0) << t.where(i, n);
      for (std::int64_t c = t.n1 - t.n0; c < ld; ++c) ASSERT_EQ(tile[(i - t.i0) * ld + c], 7);
    }
  });
}

// Where row_runs() describes a tile, each row's visible keys are exactly its run; it
// describes window, causal, global and blocks heads, Ands of them and Ors where their runs
// touch (no padding, keys past the prefix), and declines the rest.
TEST(PairRules, RowRunsAreTheVisibleKeysWhereTheyApply) {
  int described = 0, declined = 0;
  for_random_tiles(11, 300, [&](const RandomTile& t) {
    std::vector<std::int64_t> first(t.i1 - t.i0, -7), last(t.i1 - t.i0, -7);
    if (!t.rules.row_runs(t.b, t.h, t.i0, t.i1, t.n0, t.n1, first.data(), last.data())) {
      ++declined;
      return;
    }
    ++described;
    for (std::int64_t i = t.i0; i < t.i1; ++i) {
      const std::int64_t lo = first[i - t.i0], hi = last[i - t.i0];
      ASSERT_TRUE(0 <= lo && lo <= hi && hi <= t.n1 - t.n0 && (lo < hi || lo == 0)) << t.where(i, t.n0);
      for (std::int64_t n = t.n0; n < t.n1; ++n)
        ASSERT_EQ(t.rules.visible(t.b, t.h, i, n), lo <= n - t.n0 && n - t.n0 < hi) << t.where(i, n);
    }
  });
  EXPECT_GT(described, 30);
  EXPECT_GT(declined, 30);

  // By hand: a window under the call's causal flag, keys past a prefix of 2.
  AttentionCall call = call_of(6, 2, 6);
  LayerSpec spec;
  spec.heads[0].mask = Mask::window(2, 1) && Mask::global(1);
  call.spec = &spec;
  call.causal = true;
  std::vector<std::int64_t> first(6), last(6);
  ASSERT_TRUE(PairRules(call).row_runs(0, 0, 0, 6, 2, 8, first.data(), last.data()));
  EXPECT_EQ(first, (std::vector<std::int64_t>{0, 0, 0, 0, 0, 0}));  // global(1): key 0 only,
  EXPECT_EQ(last, (std::vector<std::int64_t>{1, 1, 1, 0, 0, 0}));   // within the window to query 2
  EXPECT_FALSE(PairRules(call).row_runs(0, 0, 0, 6, 1, 8, first.data(), last.data()));  // a prefix slot
  // An Or is a run where its runs touch: keys 0 .. 1 and the window meet up to query 2; query
  // 4's window (keys 2 .. 5) leaves a gap after key 0, so the tile is declined.
  spec.heads[0].mask = Mask::window(2, 1) || Mask::global(1);
  call.causal = false;
  ASSERT_TRUE(PairRules(call).row_runs(0, 0, 0, 3, 2, 8, first.data(), last.data()));
  EXPECT_EQ(std::vector<std::int64_t>(first.begin(), first.begin() + 3), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(std::vector<std::int64_t>(last.begin(), last.begin() + 3), (std::vector<std::int64_t>{6, 3, 4}));
  EXPECT_FALSE(PairRules(call).row_runs(0, 0, 0, 6, 2, 8, first.data(), last.data()));
  EXPECT_TRUE(PairRules(call).row_runs(0, 0, 3, 6, 3, 8, first.data(), last.data()));  // key 0 left out
  spec.heads[0].mask = !Mask::window(2, 1);
  EXPECT_FALSE(PairRules(call).row_runs(0, 0, 0, 6, 2, 8, first.data(), last.data()));
}

TEST(PairRules, T5BucketsFollowTheStandardFunction) {
  // 32 buckets, max distance 128: 16 per sign, 8 exact, then logarithmic.
  EXPECT_EQ(t5_bucket(0, 32, 128), 0);
  EXPECT_EQ(t5_bucket(-3, 32, 128), 3);
  EXPECT_EQ(t5_bucket(3, 32, 128), 19);
  EXPECT_EQ(t5_bucket(-8, 32, 128), 8);
  EXPECT_EQ(t5_bucket(8, 32, 128), 24);
  EXPECT_EQ(t5_bucket(20, 32, 128), 26);  // 8 + floor(ln(2.5) / ln(16) * 8)
  EXPECT_EQ(t5_bucket(127, 32, 128), 31);
  EXPECT_EQ(t5_bucket(1000, 32, 128), 31);
  EXPECT_EQ(t5_bucket(-1000, 32, 128), 15);
}

TEST(PairRules, RelationsOnHandExamples) {
  // Sections: root 0, A 1, A.1 2 (under A), B 3; tokens in sections 1 1 2 3.
  SectionTree tree;
  tree.parent = {-1, 0, 1, 0};
  tree.depth = {0, 1, 2, 1};
  TokenLayout layout;
  layout.section = ids({1, 1, 2, 3});
  layout.path_len = torch::zeros({1, 4, 4}, torch::kInt32);
  layout.lvl_diff = torch::zeros({1, 4, 4}, torch::kInt32);
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 4; ++y) {
      layout.path_len[0][x][y] = tree.path_len(x, y);
      layout.lvl_diff[0][x][y] = tree.lvl_diff(x, y);
    }
  AttentionCall call = call_of(4, 1, 4);
  call.query_layout = call.key_layout = &layout;
  LayerSpec spec;
  spec.bias = {RelationKind::Hibrids, 2, 1};
  call.spec = &spec;
  call.bias_table = torch::zeros({1, 15});
  {
    const PairRules rules(call);
    EXPECT_TRUE(rules.has_relation());
    EXPECT_EQ(rules.relation(0, 0, 0), -1);  // prefix slot
    // id = (path + 2) * 3 + level + 1
    EXPECT_EQ(rules.relation(0, 0, 1), 7);   // same section: path 0, level 0
    EXPECT_EQ(rules.relation(0, 2, 4), 12);  // A.1 -> B: path 3 clamped to 2, level -1
    EXPECT_EQ(rules.relation(0, 3, 3), 2);   // B -> A.1: path -3 clamped to -2, level +1
    EXPECT_EQ(rules.relation(0, 0, 3), 11);  // A -> A.1: path 1, level 1
  }
  spec.bias = {.kind = RelationKind::SectionDistance, .buckets = 8, .max_distance = 4};
  call.bias_table = torch::zeros({1, 8});
  {
    // 8 buckets, 4 per sign, 2 exact: d = 0, 1, 2 -> 0, 5, 6; d = -1, -2 -> 1, 2.
    const PairRules rules(call);
    EXPECT_EQ(rules.relation(0, 0, 1), 0);
    EXPECT_EQ(rules.relation(0, 0, 3), 5);
    EXPECT_EQ(rules.relation(0, 0, 4), 6);
    EXPECT_EQ(rules.relation(0, 3, 3), 1);
    EXPECT_EQ(rules.relation(0, 3, 1), 2);
  }
  spec.bias = {.kind = RelationKind::T5Buckets, .buckets = 8, .max_distance = 4};
  call.query_offset = 0;
  {
    const PairRules rules(call);
    EXPECT_EQ(rules.relation(0, 3, 1), t5_bucket(-3, 8, 4));
    EXPECT_EQ(rules.relation(0, 1, 4), t5_bucket(2, 8, 4));
  }
}

TEST(PairRules, RelationTileMatchesRelation) {
  std::mt19937 rng(11);
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const auto r = test::random_call(rng);
    const PairRules rules(r->call);
    checked += rules.has_relation();
    for (std::int64_t b = 0; b < rules.batch(); ++b) {
      const std::int64_t ld = rules.keys() + 1;
      std::vector<std::int32_t> tile(rules.queries() * ld, 99);
      rules.relation_tile(b, 0, rules.queries(), 0, rules.keys(), tile.data(), ld);
      for (std::int64_t i = 0; i < rules.queries(); ++i)
        for (std::int64_t n = 0; n < rules.keys(); ++n) {
          const std::int32_t id = rules.relation(b, i, n);
          ASSERT_EQ(tile[i * ld + n], id) << "trial " << trial;
          if (n < rules.prefix_len() || !rules.has_relation())
            ASSERT_EQ(id, -1);
          else
            ASSERT_TRUE(id >= 0 && id < relation_count(r->spec.bias));
        }
    }
  }
  EXPECT_GT(checked, 40);
}

// uniform_relation() over random tiles of random calls: when it names a relation, every pair
// of the tile has it; for the section-level biases it names one whenever the tile's queries
// share a section and its keys share one (and it is never asked about prefix slots beside keys).
TEST(PairRules, UniformRelationIsTheRelationOfEveryPair) {
  std::mt19937 rng(17);
  int uniform = 0, mixed = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const auto r = test::random_call(rng);
    const PairRules rules(r->call);
    const std::int64_t lq = rules.queries(), keys = rules.keys();
    if (lq == 0 || keys == 0) continue;
    for (int t = 0; t < 20; ++t) {
      const std::int64_t b = std::uniform_int_distribution<std::int64_t>(0, rules.batch() - 1)(rng);
      const std::int64_t i0 = std::uniform_int_distribution<std::int64_t>(0, lq - 1)(rng);
      const std::int64_t n0 = std::uniform_int_distribution<std::int64_t>(0, keys - 1)(rng);
      const std::int64_t i1 = std::uniform_int_distribution<std::int64_t>(i0 + 1, std::min(lq, i0 + 4))(rng);
      const std::int64_t n1 = std::uniform_int_distribution<std::int64_t>(n0 + 1, std::min(keys, n0 + 4))(rng);
      std::set<std::int32_t> seen;
      for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t n = n0; n < n1; ++n) seen.insert(rules.relation(b, i, n));
      const std::optional<std::int32_t> one = rules.uniform_relation(b, i0, i1, n0, n1);
      if (one) {
        ++uniform;
        ASSERT_EQ(seen, std::set<std::int32_t>{*one}) << "trial " << trial;
      } else {
        ++mixed;
        const bool section_bias = r->spec.bias.kind == RelationKind::Hibrids ||
                                  r->spec.bias.kind == RelationKind::HibridsSelected ||
                                  r->spec.bias.kind == RelationKind::SectionDistance;
        if (section_bias && seen.size() == 1 && n0 >= rules.prefix_len()) {
          // Nullopt with one relation is allowed only when sections differ inside the tile.
          std::set<std::int32_t> q_sections, k_sections;
          for (std::int64_t i = i0; i < i1; ++i) q_sections.insert(rules.state().q(LayoutField::Section).row(b)[i]);
          for (std::int64_t n = n0; n < n1; ++n)
            k_sections.insert(rules.state().k(LayoutField::Section).row(b)[n - rules.prefix_len()]);
          ASSERT_TRUE(q_sections.size() > 1 || k_sections.size() > 1) << "trial " << trial;
        }
      }
    }
  }
  EXPECT_GT(uniform, 100);
  EXPECT_GT(mixed, 100);
}

TEST(PairRules, FixedKeysAreThePreviousAndNextTokens) {
  AttentionCall call = call_of(4, 1, 4);
  LayerSpec spec;
  spec.heads = {HeadSpec{}, HeadSpec{}, HeadSpec{}};
  spec.heads[0].fixed = FixedPattern::PreviousToken;
  spec.heads[1].fixed = FixedPattern::NextToken;
  call.q = torch::zeros({1, 3, 4, 2});
  call.k = call.v = torch::zeros({1, 3, 5, 2});
  call.spec = &spec;
  call.key_padding = torch::tensor({true, true, false, true}).view({1, 4});
  {
    const PairRules rules(call);
    EXPECT_EQ(rules.fixed(0), FixedPattern::PreviousToken);
    EXPECT_EQ(rules.fixed(2), FixedPattern::None);
    EXPECT_EQ(rules.fixed_key(0, 0, 0), -1);  // no previous token
    EXPECT_EQ(rules.fixed_key(0, 0, 1), 1);   // key 0 behind one prefix slot
    EXPECT_EQ(rules.fixed_key(0, 0, 3), -1);  // key 2 is padding
    EXPECT_EQ(rules.fixed_key(0, 1, 0), 2);
    EXPECT_EQ(rules.fixed_key(0, 1, 3), -1);  // past the end
    EXPECT_EQ(rules.fixed_key(0, 2, 1), -1);  // not a fixed head
    EXPECT_EQ(row(rules, 1, 0), "01000");
    EXPECT_EQ(row(rules, 3, 0), "00000");
  }
  call.causal = true;  // the next token is in the future
  call.query_offset = 1;
  call.q = torch::zeros({1, 3, 2, 2});
  const PairRules rules(call);
  EXPECT_EQ(rules.fixed_key(0, 1, 0), -1);
  EXPECT_EQ(rules.fixed_key(0, 0, 0), 1);  // i' = 1: previous is key 0
}

TEST(PairRules, MissingInputsAreNamed) {
  TokenLayout layout;
  layout.sentence = ids({0, 0, 1});
  AttentionCall call = call_of(3, 2, 3);
  LayerSpec spec;
  call.spec = &spec;
  spec.heads[0].mask = Mask::of(MaskKind::SameSection);
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec needs query_layout.section (mask same_section)");
  call.query_layout = &layout;
  spec.heads[0].mask = Mask::causal() && Mask::of(MaskKind::SameSentence);
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec needs key_layout.sentence (mask same_sentence)");
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  layout.segment = ids({0, 0, 1});
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec needs call.prefix_segment [P] = [2] (mask prefix_block)");
  spec.heads[0].mask = Mask::all();
  spec.bias = {RelationKind::T5Buckets};
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec needs call.bias_table [H, relation_count] = [1, 32] (bias t5_buckets)");
  spec.bias = {RelationKind::Hibrids};
  call.key_layout = &layout;
  layout.section = ids({0, 0, 1});
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec needs query_layout.path_len (bias hibrids)");
  spec.bias = {};
  layout.sentence = ids({0, 0, 1, 1});
  spec.heads[0].mask = Mask::of(MaskKind::SameSentence);
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "query_layout.sentence has shape [1, 4], expected [1, 3]");
  spec.heads = {HeadSpec{}, HeadSpec{}};
  EXPECT_EQ(error_of([&] { PairRules rules(call); }),
            "attention spec has 2 head specs for 1 heads (give one for every head, or one per "
            "head)");
}

TEST(PairRules, OwnsWhatItReads) {
  std::mt19937 rng(3);
  std::vector<PairRules> kept;
  std::vector<std::vector<std::uint8_t>> expected;
  for (int trial = 0; trial < 10; ++trial) {
    auto r = test::random_call(rng);
    const PairRules rules(r->call);
    std::vector<std::uint8_t> all(rules.queries() * rules.keys());
    rules.visible_tile(0, 0, 0, rules.queries(), 0, rules.keys(), all.data(), rules.keys());
    expected.push_back(all);
    kept.push_back(rules);  // a copy shares the state
    r.reset();              // the call's layouts, spec and tensors are gone
  }
  for (std::size_t t = 0; t < kept.size(); ++t) {
    const PairRules& rules = kept[t];
    for (std::int64_t i = 0; i < rules.queries(); ++i)
      for (std::int64_t n = 0; n < rules.keys(); ++n)
        ASSERT_EQ(rules.visible(0, 0, i, n), expected[t][i * rules.keys() + n] == 1);
  }
}

TEST(PairRules, OneLayoutRowServesTheBatch) {
  TokenLayout layout;
  layout.section = ids({0, 0, 1, 1});
  AttentionCall call = call_of(4, 0, 4);
  call.q = torch::zeros({3, 1, 4, 2});
  call.k = call.v = torch::zeros({3, 1, 4, 2});
  call.query_layout = call.key_layout = &layout;
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::SameSection);
  call.spec = &spec;
  const PairRules rules(call);
  for (std::int64_t b = 0; b < 3; ++b) EXPECT_EQ(row(rules, 2, 0, b), "0011");
}

}  // namespace
}  // namespace strata::attn
