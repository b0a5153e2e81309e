#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "strata/attn/counter_random.h"
#include "attn/kernels/reference.h"
#include "strata/attn/pair_rules.h"
#include "random_calls.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

at::Tensor reference_ids(std::vector<std::int32_t> values) {
  return torch::tensor(values, torch::kInt32).view({1, -1});
}

// Zero queries (every visible key scores the same) and v = identity, so the output row is the
// attention row itself: [B, H, Lq, P + Lk].
AttentionCall uniform_call(std::int64_t heads, std::int64_t lq, std::int64_t prefix,
                           std::int64_t lk) {
  AttentionCall call;
  call.q = torch::zeros({1, heads, lq, 3});
  call.k = torch::randn({1, heads, prefix + lk, 3});
  call.v = torch::eye(prefix + lk).expand({1, heads, prefix + lk, prefix + lk});
  call.prefix_len = prefix;
  return call;
}

void expect_rows(const at::Tensor& probs, const std::vector<std::vector<float>>& rows) {
  ASSERT_EQ(probs.size(0), static_cast<std::int64_t>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i)
    EXPECT_TRUE(torch::allclose(probs[i], torch::tensor(rows[i]), 1e-6, 1e-6))
        << "row " << i << ": " << probs[i];
}

TEST(ReferenceSpec, WindowOfFourTokens) {
  AttentionCall call = uniform_call(1, 4, 0, 4);
  LayerSpec spec;
  spec.heads[0].mask = Mask::window(1, 0);
  call.spec = &spec;
  expect_rows(reference_attention(call)[0][0],
              {{1, 0, 0, 0}, {.5, .5, 0, 0}, {0, .5, .5, 0}, {0, 0, .5, .5}});
}

TEST(ReferenceSpec, MatchingTokenExemptsTokensThatOccurOnce) {
  TokenLayout layout;
  layout.token = reference_ids({5, 6, 5, 7});
  layout.repeated = reference_ids({1, 0, 1, 0});
  AttentionCall call = uniform_call(1, 4, 0, 4);
  call.query_layout = call.key_layout = &layout;
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::MatchingToken);
  call.spec = &spec;
  const at::Tensor p = reference_attention(call)[0][0];
  expect_rows(p.narrow(0, 0, 2), {{.5, 0, .5, 0}, {.25, .25, .25, .25}});
}

TEST(ReferenceSpec, PrefixBlockingByQuerySegment) {
  TokenLayout layout;
  layout.segment = reference_ids({0, 0, 1});
  AttentionCall call = uniform_call(1, 3, 2, 3);
  call.query_layout = &layout;
  call.prefix_segment = torch::tensor({0, 1}, torch::kInt32);
  LayerSpec spec;
  spec.heads[0].mask = Mask::of(MaskKind::PrefixBlock);
  call.spec = &spec;
  expect_rows(reference_attention(call)[0][0],
              {{.25, 0, .25, .25, .25}, {.25, 0, .25, .25, .25}, {0, .25, .25, .25, .25}});
}

TEST(ReferenceSpec, FixedHeadsCopyThePreviousAndNextToken) {
  AttentionCall call = uniform_call(2, 3, 1, 3);
  call.q = torch::randn({1, 2, 3, 3});  // scores do not matter to a fixed head
  LayerSpec spec;
  spec.heads = {HeadSpec{}, HeadSpec{}};
  spec.heads[0].fixed = FixedPattern::PreviousToken;
  spec.heads[1].fixed = FixedPattern::NextToken;
  spec.heads[1].mask = Mask::causal();  // ignored by a fixed head
  call.spec = &spec;
  const at::Tensor p = reference_attention(call)[0];
  expect_rows(p[0], {{0, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}});
  expect_rows(p[1], {{0, 0, 1, 0}, {0, 0, 0, 1}, {0, 0, 0, 0}});
}

TEST(ReferenceSpec, FullyMaskedRowGivesZerosAndFiniteGradients) {
  AttentionCall call;
  call.q = torch::randn({1, 2, 3, 4}, torch::requires_grad());
  call.k = torch::randn({1, 2, 3, 4}, torch::requires_grad());
  call.v = torch::randn({1, 2, 3, 4}, torch::requires_grad());
  call.key_padding = torch::tensor({false, true, true}).view({1, 3});
  LayerSpec spec;
  spec.heads[0].mask = Mask::window(0, 0);  // query 0 sees only key 0, which is padding
  spec.bias = {.kind = RelationKind::T5Buckets, .buckets = 8, .max_distance = 16};
  call.bias_table = torch::randn({2, 8}, torch::requires_grad());
  call.spec = &spec;
  const at::Tensor out = reference_attention(call);
  EXPECT_TRUE(torch::equal(out.select(2, 0), torch::zeros({1, 2, 4})));
  EXPECT_GT(out.select(2, 1).abs().sum().item<float>(), 0);
  out.sum().backward();
  for (const at::Tensor& t : {call.q, call.k, call.v, call.bias_table})
    EXPECT_TRUE(torch::isfinite(t.grad()).all().item<bool>());
  EXPECT_TRUE(torch::equal(call.q.grad().select(2, 0), torch::zeros({1, 2, 4})));
}

// TopP written directly from spec.h, pair by pair in double.
at::Tensor direct_top_p(const AttentionCall& call, double p) {
  const PairRules rules(call);
  const std::int64_t B = rules.batch(), H = rules.heads(), Lq = rules.queries(), N = rules.keys();
  const at::Tensor q = call.q.to(torch::kDouble), k = call.k.to(torch::kDouble);
  const at::Tensor v = call.v.to(torch::kDouble);
  at::Tensor out = torch::zeros({B, H, Lq, v.size(3)}, torch::kDouble);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h) {
      std::vector<std::vector<double>> a(Lq, std::vector<double>(N, 0.0));
      std::vector<double> impact(N, 0.0);
      for (std::int64_t i = 0; i < Lq; ++i) {
        double max = -INFINITY, sum = 0;
        std::vector<double> s(N);
        for (std::int64_t n = 0; n < N; ++n) {
          s[n] = q[b][h][i].dot(k[b][h][n]).item<double>() * scale;
          if (rules.visible(b, h, i, n)) max = std::max(max, s[n]);
        }
        for (std::int64_t n = 0; n < N; ++n)
          if (rules.visible(b, h, i, n)) sum += (a[i][n] = std::exp(s[n] - max));
        for (std::int64_t n = 0; n < N; ++n) {
          if (sum > 0) a[i][n] /= sum;
          impact[n] += a[i][n];
        }
      }
      const double total = std::accumulate(impact.begin(), impact.end(), 0.0);
      std::vector<bool> keep(N, false);
      double mass = 0;
      while (total > 0 && mass < p) {  // the largest impact not yet kept, lower n on ties
        std::int64_t best = -1;
        for (std::int64_t n = 0; n < N; ++n)
          if (!keep[n] && (best < 0 || impact[n] > impact[best])) best = n;
        if (best < 0) break;  // all kept: rounding left the mass just below p = 1
        keep[best] = true;
        mass += impact[best] / total;
      }
      for (std::int64_t i = 0; i < Lq; ++i)
        for (std::int64_t n = 0; n < N; ++n)
          if (keep[n]) out[b][h][i] += a[i][n] * v[b][h][n];
    }
  return out;
}

TEST(ReferenceSpec, TopPMatchesADirectImplementation) {
  std::mt19937 rng(21);
  torch::manual_seed(21);
  int truncated = 0;
  for (int trial = 0; trial < 12; ++trial) {
    auto r = test::random_call(
        rng, {.max_len = 12, .relations = false, .fixed_heads = false, .dense_bias = false});
    const double p = std::vector<double>{0.3, 0.6, 0.9, 1.0}[trial % 4];
    for (HeadSpec& head : r->spec.heads) head.normaliser = {NormaliserKind::TopP, 1.0, p};
    const at::Tensor got = reference_attention(r->call);
    const at::Tensor want = direct_top_p(r->call, p);
    EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), want, 1e-4, 1e-5)) << "trial " << trial;
    for (HeadSpec& head : r->spec.heads) head.normaliser = {};
    truncated += !torch::allclose(got, reference_attention(r->call), 1e-4, 1e-5) ? 1 : 0;
  }
  EXPECT_GT(truncated, 4);  // p < 1 does drop keys
}

// Self-attention over two items of 8 tokens in the sections of the tree root, A, A.1 (under
// A), B; one prefix slot; every relation takes several values.
struct SectionCall {
  TokenLayout layout;
  LayerSpec spec;
  AttentionCall call;
  explicit SectionCall(Relation relation) {
    SectionTree tree;
    tree.parent = {-1, 0, 1, 0};
    tree.depth = {0, 1, 2, 1};
    layout.section =
        torch::tensor({0, 1, 1, 2, 2, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 3}, torch::kInt32).view({2, 8});
    layout.path_len = torch::zeros({1, 4, 4}, torch::kInt32);
    layout.lvl_diff = torch::zeros({1, 4, 4}, torch::kInt32);
    layout.section_depth = torch::tensor({0, 1, 2, 1}, torch::kInt32).view({1, 4});
    for (int x = 0; x < 4; ++x)
      for (int y = 0; y < 4; ++y) {
        layout.path_len[0][x][y] = tree.path_len(x, y);
        layout.lvl_diff[0][x][y] = tree.lvl_diff(x, y);
      }
    spec.heads[0].mask = Mask::window(3, 3) || Mask::of(MaskKind::SameSection);
    spec.bias = relation;
    call.q = torch::randn({2, 2, 8, 4}, torch::kDouble);
    call.k = torch::randn({2, 2, 9, 4}, torch::kDouble);
    call.v = torch::randn({2, 2, 9, 4}, torch::kDouble);
    call.prefix_len = 1;
    call.causal = true;
    call.query_layout = call.key_layout = &layout;
    call.spec = &spec;
    call.bias_table = torch::randn({2, relation_count(relation)}, torch::kDouble);
  }
};

const Relation kRelations[] = {
    Relation{.kind = RelationKind::Hibrids, .max_path = 2, .max_level = 1},
    Relation{.kind = RelationKind::HibridsSelected},
    Relation{.kind = RelationKind::T5Buckets, .buckets = 8, .max_distance = 12},
    Relation{.kind = RelationKind::SectionDistance, .buckets = 4, .max_distance = 3}};

TEST(ReferenceSpec, BiasTableGradientMatchesFiniteDifferences) {
  torch::manual_seed(4);
  for (const Relation& relation : kRelations) {
    SectionCall c(relation);
    AttentionCall& call = c.call;
    const at::Tensor table = call.bias_table;
    const at::Tensor weight = torch::randn({2, 2, 8, 4}, torch::kDouble);
    auto loss = [&](const at::Tensor& t) {
      call.bias_table = t;
      return (reference_attention(call) * weight).sum();
    };
    const at::Tensor t = table.clone().requires_grad_();
    loss(t).backward();
    at::Tensor numeric = torch::zeros_like(table);
    const double eps = 1e-6;
    for (std::int64_t h = 0; h < table.size(0); ++h)
      for (std::int64_t id = 0; id < table.size(1); ++id) {
        at::Tensor plus = table.clone(), minus = table.clone();
        plus[h][id] += eps;
        minus[h][id] -= eps;
        numeric[h][id] = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * eps);
      }
    EXPECT_TRUE(torch::allclose(t.grad(), numeric, 1e-5, 1e-7))
        << relation_name(relation.kind) << "\n"
        << t.grad() << "\n"
        << numeric;
    EXPECT_GT(t.grad().abs().gt(1e-6).sum().item<std::int64_t>(), 2)
        << relation_name(relation.kind);
  }
}

TEST(ReferenceSpec, RelationBiasIsTheTableRowOfTheRelation) {
  torch::manual_seed(8);
  for (const Relation& relation : kRelations) {
    SectionCall c(relation);
    const AttentionCall& call = c.call;
    const PairRules rules(call);
    // The same scores as a dense bias: bias_table[h][relation], 0 on prefix slots.
    LayerSpec dense = c.spec;
    dense.bias = {};
    dense.dense_bias = true;
    AttentionCall other = call;
    other.spec = &dense;
    other.bias_table = at::Tensor();
    other.dense_bias = torch::zeros({2, 2, 8, 9}, torch::kDouble);
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t i = 0; i < 8; ++i)
          for (std::int64_t n = 0; n < 9; ++n) {
            const std::int32_t id = rules.relation(b, i, n);
            if (id >= 0) other.dense_bias[b][h][i][n] = call.bias_table[h][id];
          }
    const at::Tensor biased = reference_attention(call);
    EXPECT_TRUE(torch::allclose(biased, reference_attention(other), 1e-10, 1e-12));
    dense.dense_bias = false;
    other.dense_bias = at::Tensor();
    EXPECT_FALSE(torch::allclose(biased, reference_attention(other), 1e-3, 1e-3));
  }
}

TEST(ReferenceSpec, GumbelNoiseFollowsTheSeed) {
  torch::manual_seed(5);
  AttentionCall call;
  call.q = torch::randn({2, 2, 5, 4});
  call.k = torch::randn({2, 2, 6, 4});
  call.v = torch::randn({2, 2, 6, 4});
  call.causal = true;
  LayerSpec spec;
  spec.heads[0].normaliser = {NormaliserKind::Gumbel, 0.5};
  call.spec = &spec;
  call.training = true;
  call.seed = 17;
  const at::Tensor a = reference_attention(call);
  EXPECT_TRUE(torch::equal(a, reference_attention(call)));
  call.seed = 18;
  EXPECT_FALSE(torch::allclose(a, reference_attention(call)));
  // Eval: softmax(s / tau), which is plain attention with q / tau.
  call.training = false;
  const at::Tensor eval = reference_attention(call);
  AttentionCall plain = call;
  plain.spec = nullptr;
  plain.q = call.q / 0.5;
  EXPECT_TRUE(torch::allclose(eval, reference_attention(plain), 1e-5, 1e-6));
  call.seed = 99;
  EXPECT_TRUE(torch::equal(eval, reference_attention(call)));
  // Training: the noise is counter_gumbel(seed, b, h, i, n), added before the temperature.
  call.training = true;
  const at::Tensor scores = torch::matmul(call.q / 2.0, call.k.transpose(2, 3));
  at::Tensor expected = torch::zeros_like(scores);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 5; ++i)
        for (std::int64_t n = 0; n <= i; ++n)
          expected[b][h][i][n] =
              (scores[b][h][i][n].item<float>() + counter_gumbel(99, b, h, i, n)) / 0.5;
  const at::Tensor causal = torch::ones({5, 6}).tril().to(torch::kBool);
  const at::Tensor probs =
      torch::softmax(expected.masked_fill(causal.logical_not(), -INFINITY), -1);
  EXPECT_TRUE(torch::allclose(reference_attention(call), torch::matmul(probs, call.v), 1e-5, 1e-5));
}

TEST(ReferenceSpec, DropoutComesFromTheCounterGenerator) {
  torch::manual_seed(6);
  for (const bool structured : {false, true}) {
    AttentionCall call;
    call.q = torch::randn({1, 2, 4, 3});
    call.k = torch::randn({1, 2, 5, 3});
    call.v = torch::eye(5).expand({1, 2, 5, 5});
    LayerSpec spec;
    spec.heads[0].mask = Mask::window(2, 2);
    if (structured) call.spec = &spec;
    const at::Tensor probs = reference_attention(call);
    call.training = true;
    call.dropout = 0.4;
    call.seed = 3;
    const at::Tensor dropped = reference_attention(call);
    for (std::int64_t h = 0; h < 2; ++h)
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t n = 0; n < 5; ++n) {
          const float want =
              counter_keep(3, 0.4, 0, h, i, n) ? probs[0][h][i][n].item<float>() / 0.6f : 0.0f;
          EXPECT_NEAR(dropped[0][h][i][n].item<float>(), want, 1e-6);
        }
    EXPECT_TRUE(torch::equal(dropped, reference_attention(call)));
  }
}

TEST(ReferenceSpec, PlainSpecsTakeTheFastPathWithTheSameResult) {
  torch::manual_seed(9);
  AttentionCall call;
  call.q = torch::randn({2, 3, 5, 4});
  call.k = torch::randn({2, 3, 7, 4});
  call.v = torch::randn({2, 3, 7, 4});
  call.prefix_len = 2;
  call.causal = true;
  call.key_padding =
      torch::tensor({true, true, true, false, true, true, true, true, true, false}).view({2, 5});
  const at::Tensor plain = reference_attention(call);
  LayerSpec all;  // plain
  call.spec = &all;
  EXPECT_TRUE(torch::equal(plain, reference_attention(call)));
  LayerSpec structured;  // the same pairs through the per-pair path
  structured.heads[0].mask = Mask::all() || Mask::causal();
  call.spec = &structured;
  EXPECT_TRUE(torch::allclose(plain, reference_attention(call), 1e-6, 1e-6));
  EXPECT_EQ(dense_visibility(call).sizes(), (std::vector<std::int64_t>{2, 3, 5, 7}));
  call.spec = &all;
  EXPECT_EQ(dense_visibility(call).sizes(), (std::vector<std::int64_t>{2, 1, 5, 7}));
}

TEST(ReferenceSpec, MissingInputsAreErrors) {
  AttentionCall call = uniform_call(1, 3, 0, 3);
  LayerSpec spec;
  spec.dense_bias = true;
  call.spec = &spec;
  EXPECT_EQ(
      test_support::error_of([&] { attend(call, Kernel::Reference); }),
      "attention spec needs call.dense_bias [B or 1, H or 1, Lq, P + Lk] (dense_bias = true)");
}

}  // namespace
}  // namespace strata::attn
