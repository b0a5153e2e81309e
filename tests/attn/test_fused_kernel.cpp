// The fused kernel against the reference kernel: outputs and every gradient (q, k, v,
// bias_table, dense_bias) on random inputs, layouts and specs, plus a finite-difference
// check of the fused backward in double.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <optional>
#include <random>
#include <vector>

#include "random_calls.h"
#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/tile_gemm.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

// One attention problem; call() points into this object, so keep it alive while it runs.
struct Problem {
  std::int64_t batch = 2, heads = 2, lq = 70, lk = 70, prefix = 0, dim = 8;
  torch::Dtype dtype = torch::kDouble;
  std::optional<LayerSpec> spec;
  TokenLayout query_layout, key_layout;
  at::Tensor q, k, v, key_padding, prefix_segment, bias_table, dense_bias;
  std::vector<std::int64_t> dense_shape;  // empty = no dense bias; else [B or 1, H or 1]
  bool causal = false, training = false, padding = false;
  std::int64_t query_offset = 0;
  double dropout = 0;
  std::uint64_t seed = 7;
  std::optional<BlockMask> block_mask;
  std::int64_t q_tile = 0, k_tile = 0;  // > 0: compile a block mask with these tiles

  void make(std::uint32_t seed_value = 1) {
    torch::manual_seed(seed_value);
    const auto options = torch::TensorOptions().dtype(dtype);
    q = torch::randn({batch, heads, lq, dim}, options);
    k = torch::randn({batch, heads, prefix + lk, dim}, options);
    v = torch::randn({batch, heads, prefix + lk, dim}, options);
    // Queries and keys over the same section trees (cross-attention when lq != lk).
    std::mt19937 rng(seed_value);
    std::vector<SectionTree> trees;
    for (std::int64_t b = 0; b < batch; ++b) trees.push_back(test::random_tree(rng, 6));
    query_layout = test::random_layout(rng, trees, lq, std::vector<std::int64_t>(batch, lq));
    key_layout = lq == lk
                     ? query_layout
                     : test::random_layout(rng, trees, lk, std::vector<std::int64_t>(batch, lk));
    if (padding) {
      key_padding = torch::rand({batch, lk}) > 0.25;
      key_padding.index_put_({0, torch::indexing::Slice(lk - lk / 4, lk)}, false);
    }
    if (prefix > 0) prefix_segment = torch::randint(0, 3, {prefix}, torch::kInt32);
    if (spec && spec->bias.kind != RelationKind::None)
      bias_table = torch::randn({heads, relation_count(spec->bias)}, options);
    if (!dense_shape.empty())
      dense_bias = torch::randn({dense_shape[0], dense_shape[1], lq, prefix + lk}, options);
    if (q_tile > 0) block_mask = compile_block_mask(call(), q_tile, k_tile);
  }

  AttentionCall call() const {
    AttentionCall c;
    c.q = q, c.k = k, c.v = v;
    c.key_padding = key_padding;
    c.causal = causal;
    c.query_offset = query_offset;
    c.prefix_len = prefix;
    c.dropout = dropout;
    c.training = training;
    c.spec = spec ? &*spec : nullptr;
    c.query_layout = &query_layout;
    c.key_layout = &key_layout;
    c.prefix_segment = prefix_segment;
    c.bias_table = bias_table;
    c.dense_bias = dense_bias;
    c.seed = seed;
    c.block_mask = block_mask ? &*block_mask : nullptr;
    return c;
  }
};

LayerSpec spec_of(std::vector<HeadSpec> heads, Relation bias = {}, bool dense = false) {
  LayerSpec s;
  s.heads = std::move(heads);
  s.bias = bias;
  s.dense_bias = dense;
  return s;
}

HeadSpec head(Mask mask, NormaliserKind kind = NormaliserKind::Softmax, double tau = 1,
              double p = 1) {
  HeadSpec h;
  h.mask = std::move(mask);
  h.normaliser.kind = kind;
  h.normaliser.tau = tau;
  h.normaliser.p = p;
  return h;
}

const Mask kFusedSection = Mask::of(MaskKind::SameSection);
const Mask kPrefixBlock = Mask::of(MaskKind::PrefixBlock);

HeadSpec fixed_head(FixedPattern pattern) {
  HeadSpec h;
  h.fixed = pattern;
  return h;
}

// The output and the gradients of every differentiable input, for sum(out * weights).
struct Outcome {
  at::Tensor out, dq, dk, dv, dtable, ddense;
};

Outcome run(const AttentionCall& call, Kernel kernel) {
  AttentionCall c = call;
  auto leaf = [](const at::Tensor& t) {
    return t.defined() ? t.detach().clone().requires_grad_(true) : t;
  };
  c.q = leaf(c.q), c.k = leaf(c.k), c.v = leaf(c.v);
  c.bias_table = leaf(c.bias_table), c.dense_bias = leaf(c.dense_bias);
  Outcome r;
  r.out = attend(c, kernel);
  auto generator = at::detail::createCPUGenerator(99);
  const at::Tensor weights =
      at::randn(r.out.sizes(), generator, torch::kDouble).to(r.out.scalar_type());
  (r.out * weights).sum().backward();
  auto grad = [](const at::Tensor& t) {
    if (!t.defined()) return at::Tensor();
    return t.grad().defined() ? t.grad() : torch::zeros_like(t);
  };
  r.dq = grad(c.q), r.dk = grad(c.k), r.dv = grad(c.v);
  r.dtable = grad(c.bias_table), r.ddense = grad(c.dense_bias);
  return r;
}

void expect_close(const at::Tensor& fused, const at::Tensor& reference, double tol,
                  const char* what) {
  ASSERT_EQ(fused.defined(), reference.defined()) << what;
  if (!fused.defined()) return;
  ASSERT_EQ(fused.sizes(), reference.sizes()) << what;
  ASSERT_EQ(fused.scalar_type(), reference.scalar_type()) << what;
  EXPECT_TRUE(torch::isfinite(fused.to(torch::kFloat)).all().item<bool>()) << what;
  const double err =
      (fused.to(torch::kDouble) - reference.to(torch::kDouble)).abs().max().item<double>();
  EXPECT_LE(err, tol) << what << ": max abs difference " << err;
}

// Fused and reference agree on the output and every gradient.
void expect_kernels_agree(const AttentionCall& call, double tol = 1e-9) {
  const Outcome fused = run(call, Kernel::Fused);
  const Outcome reference = run(call, Kernel::Reference);
  expect_close(fused.out, reference.out, tol, "output");
  expect_close(fused.dq, reference.dq, tol, "dq");
  expect_close(fused.dk, reference.dk, tol, "dk");
  expect_close(fused.dv, reference.dv, tol, "dv");
  expect_close(fused.dtable, reference.dtable, tol, "dtable");
  expect_close(fused.ddense, reference.ddense, tol, "ddense");
}

TEST(FusedKernel, KernelNames) {
  EXPECT_EQ(kernel_from_name("fused"), Kernel::Fused);
  EXPECT_EQ(kernel_name(Kernel::Fused), "fused");
  EXPECT_NE(test_support::error_of([] { kernel_from_name("flash"); }).find("fused"),
            std::string::npos);
}

TEST(FusedKernel, PlainCallLengthNotAMultipleOfTheTile) {
  Problem p;
  p.lq = p.lk = 100;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, PlainCallFloat) {
  Problem p;
  p.dtype = torch::kFloat;
  p.lq = p.lk = 130;
  p.dim = 16;
  p.make();
  expect_kernels_agree(p.call(), 2e-5);
}

// Rows that see kWideRowKeys keys or more on average run kWideQueryTile-query tiles
// wide_key_tile() keys wide: causal rows past a long context, a window on one head, lq not a
// multiple of the tall tile. Both key widths run on every CPU (the AVX2 one's 96 by a block mask
// of its own). Shorter rows, top-p heads, and calls that would leave a thread fewer than
// kTasksPerThread tasks keep 64 x 64.
TEST(FusedKernel, WideRowsRunTallQueryTilesAndMatchTheReference) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  Problem p;
  p.batch = 1;
  p.lq = 600, p.lk = 4700;  // 3 tall query tiles a head, 6 tasks
  p.dim = 4;
  p.causal = true;
  p.query_offset = 4100;  // rows of 4,101 to 4,700 keys
  p.spec = spec_of({head(Mask::all()), head(Mask::window(4150, 0))});
  p.make();
  const BlockMask tall = fused_block_mask(p.call());
  EXPECT_EQ(tall.q_tile, kWideQueryTile);
  EXPECT_EQ(tall.k_tile, wide_key_tile());
  EXPECT_EQ(wide_key_tile(), cpu_micro_kernel() == MicroKernel::Avx2 ? 96 : 64);
  expect_kernels_agree(p.call());
  for (const std::int64_t keys : {64, 96}) {
    p.block_mask = compile_block_mask(p.call(), kWideQueryTile, keys);
    expect_kernels_agree(p.call());
  }
  p.block_mask.reset();

  at::set_num_threads(2);  // 6 tasks < 2 x 4
  EXPECT_EQ(fused_block_mask(p.call()).q_tile, 64);
  at::set_num_threads(1);
  p.query_offset = 3000;  // rows of 3,001 to 3,600 keys
  EXPECT_EQ(fused_block_mask(p.call()).q_tile, 64);
  p.query_offset = 4100;
  p.spec = spec_of({head(Mask::all()), head(Mask::all(), NormaliserKind::TopP, 1, 0.9)});
  EXPECT_EQ(fused_block_mask(p.call()).q_tile, 64);
  at::set_num_threads(threads);
}

TEST(FusedKernel, PaddingCausalAndQueryOffsetWithSmallTiles) {
  Problem p;
  p.lq = 30, p.lk = 75;
  p.padding = p.causal = true;
  p.query_offset = 40;
  p.q_tile = 8, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, CrossAttentionWithPrefixKeys) {
  Problem p;
  p.lq = 37, p.lk = 90, p.prefix = 5;
  p.padding = true;
  p.q_tile = 16, p.k_tile = 8;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, RowsThatSeeNothingGiveZerosAndFiniteGradients) {
  Problem p;
  p.lq = p.lk = 40;
  p.causal = true;
  p.query_offset = -12;  // queries 0..11 come before every key
  p.padding = true;
  p.q_tile = 8, p.k_tile = 8;
  p.make();
  p.key_padding[1].fill_(false);  // batch item 1 has no real key at all
  p.block_mask = compile_block_mask(p.call(), 8, 8);
  const Outcome fused = run(p.call(), Kernel::Fused);
  using torch::indexing::Slice;
  EXPECT_TRUE(fused.out.index({0, Slice(), Slice(0, 12)}).eq(0).all().item<bool>());
  EXPECT_TRUE(fused.out[1].eq(0).all().item<bool>());
  for (const at::Tensor& g : {fused.dq, fused.dk, fused.dv})
    EXPECT_TRUE(torch::isfinite(g).all().item<bool>());
  EXPECT_TRUE(fused.dq[1].eq(0).all().item<bool>());
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, StructuredMasksPerHead) {
  Problem p;
  p.heads = 4;
  p.lq = p.lk = 90;
  p.padding = true;
  p.spec = spec_of({head(Mask::window(6, 3) || Mask::global(2)), head(kFusedSection && !Mask::causal()),
                    head(Mask::of(MaskKind::SameSentence) || Mask::of(MaskKind::MatchingToken)),
                    head(Mask::of(MaskKind::SameSegment) && Mask::of(MaskKind::SameDocument))});
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, HibridsBiasWithBlockMask) {
  Problem p;
  p.lq = p.lk = 80;
  Relation hibrids;
  hibrids.kind = RelationKind::Hibrids;
  p.spec = spec_of({head(Mask::window(10, 10) || kFusedSection)}, hibrids);
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, T5BiasCausalWithPrefixBlock) {
  Problem p;
  p.lq = p.lk = 50;
  p.prefix = 6;
  p.causal = true;
  Relation t5;
  t5.kind = RelationKind::T5Buckets;
  t5.buckets = 16, t5.max_distance = 40;
  p.spec =
      spec_of({head(kPrefixBlock), head(kPrefixBlock && Mask::of(MaskKind::SameParagraph))}, t5);
  p.q_tile = 16, p.k_tile = 8;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, DenseBiasBroadcastOverBatchAndHeads) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{2, 2}, {1, 2}, {2, 1}, {1, 1}}) {
    Problem p;
    p.lq = 33, p.lk = 41, p.prefix = 3;
    p.dense_shape = shape;
    p.spec = spec_of({head(Mask::all())}, {}, /*dense=*/true);
    p.q_tile = 16, p.k_tile = 16;
    p.make();
    SCOPED_TRACE(shape[0] * 10 + shape[1]);
    expect_kernels_agree(p.call());
  }
}

TEST(FusedKernel, FixedHeadsBesideSoftmaxHeads) {
  Problem p;
  p.heads = 3;
  p.lq = p.lk = 45;
  p.padding = true;
  Relation section_distance;
  section_distance.kind = RelationKind::SectionDistance;
  section_distance.buckets = 8, section_distance.max_distance = 6;
  p.spec = spec_of({fixed_head(FixedPattern::PreviousToken),
                    head(Mask::of(MaskKind::SameParagraph)), fixed_head(FixedPattern::NextToken)},
                   section_distance);
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());
}

TEST(FusedKernel, GumbelSoftmaxSameSeedSameNoise) {
  Problem p;
  p.lq = p.lk = 60;
  p.spec = spec_of({head(Mask::window(20, 20), NormaliserKind::Gumbel, 0.5),
                    head(Mask::all(), NormaliserKind::Gumbel, 2.0)});
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());  // evaluation: softmax(s / tau)
  p.training = true;
  expect_kernels_agree(p.call());
  // The noise is really there: another seed changes the output.
  const at::Tensor a = run(p.call(), Kernel::Fused).out;
  p.seed = 8;
  EXPECT_FALSE(torch::allclose(a, run(p.call(), Kernel::Fused).out));
}

TEST(FusedKernel, TopPTruncation) {
  Problem p;
  p.heads = 3;
  p.lq = 50, p.lk = 70;
  p.padding = true;
  p.spec = spec_of({head(Mask::all(), NormaliserKind::TopP, 1, 0.6),
                    head(kFusedSection || Mask::window(4, 4), NormaliserKind::TopP, 1, 0.9),
                    head(Mask::all())});
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  expect_kernels_agree(p.call());
}

// Top-p's output comes from one computation of each score plus a correction over the keys on
// the smaller side: minus the truncated ones (p near 1) or the kept ones alone (small p).
// Both sides, with prefix slots blocked by segment, padding, a bias table, a dense bias,
// partial tiles and key tiles that are truncated whole (their backward skips dP and dV).
TEST(FusedKernel, TopPCorrectsByTheSmallerSideOfTheKeys) {
  for (const double top_p : {0.2, 0.5, 0.8, 0.95, 1.0}) {
    for (const std::int64_t k_tile : {3, 16}) {
      Problem p;
      p.heads = 2;
      p.lq = 45, p.lk = 60, p.prefix = 7;
      p.padding = true;
      Relation t5;
      t5.kind = RelationKind::T5Buckets;
      t5.buckets = 8, t5.max_distance = 20;
      p.dense_shape = {2, 1};
      p.spec = spec_of({head(kPrefixBlock, NormaliserKind::TopP, 1, top_p),
                        head(kPrefixBlock && (kFusedSection || Mask::window(5, 5)), NormaliserKind::TopP,
                             1, top_p)},
                       t5, /*dense=*/true);
      p.q_tile = 8, p.k_tile = k_tile;
      p.make(static_cast<std::uint32_t>(100 * top_p) + static_cast<std::uint32_t>(k_tile));
      SCOPED_TRACE(testing::Message() << "p " << top_p << ", k_tile " << k_tile);
      expect_kernels_agree(p.call());
    }
  }
}

// fp32 at the benchmark's shape, scaled down: 100 prefix slots in 3 groups before 300 keys,
// default tiles, top-p 0.95 with and without blocking.
TEST(FusedKernel, TopPFloatWithPrefixes) {
  Problem p;
  p.dtype = torch::kFloat;
  p.batch = 1, p.heads = 2;
  p.lq = p.lk = 300, p.prefix = 100, p.dim = 16;
  p.spec = spec_of({head(Mask::all(), NormaliserKind::TopP, 1, 0.95),
                    head(kPrefixBlock, NormaliserKind::TopP, 1, 0.95)});
  p.make(5);
  expect_kernels_agree(p.call(), 2e-5);
}

// The keys kept come from impact sums in a fixed order: the same for any thread count.
TEST(FusedKernel, TopPSameForAnyThreadCount) {
  Problem p;
  p.dtype = torch::kFloat;
  p.batch = 1, p.heads = 3;
  p.lq = p.lk = 200, p.prefix = 10, p.dim = 8;
  p.spec = spec_of({head(Mask::all(), NormaliserKind::TopP, 1, 0.9)});
  p.q_tile = 16, p.k_tile = 16;
  p.make(3);
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const Outcome one = run(p.call(), Kernel::Fused);
  at::set_num_threads(3);
  const Outcome three = run(p.call(), Kernel::Fused);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one.out, three.out));
}

TEST(FusedKernel, DropoutSameSeedSameMask) {
  Problem p;
  p.heads = 3;
  p.lq = p.lk = 60;
  p.training = true;
  p.dropout = 0.3;
  p.spec = spec_of({head(Mask::causal()), head(Mask::all(), NormaliserKind::TopP, 1, 0.8),
                    fixed_head(FixedPattern::PreviousToken)});
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  // The reference applies the keep scale 1 / (1 - rate) rounded to float, hence 1e-7.
  expect_kernels_agree(p.call(), 1e-6);
}

// Random layouts, masks, relations, fixed heads, padding, prefixes, causality, query offsets
// and cross-attention (random_calls.h), with random normalisers, dropout and tile sizes.
TEST(FusedKernel, RandomCallsMatchReference) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    SCOPED_TRACE(trial);
    const auto r = test::random_call(rng);
    AttentionCall& call = r->call;
    for (at::Tensor* t : {&call.q, &call.k, &call.v, &call.bias_table, &call.dense_bias})
      if (t->defined()) *t = t->to(torch::kDouble);
    for (HeadSpec& h : r->spec.heads) {
      h.normaliser.kind = static_cast<NormaliserKind>(test::uniform(rng, 0, 2));
      h.normaliser.tau = 0.5 + test::uniform(rng, 0, 3) * 0.5;
      h.normaliser.p = 0.3 + test::uniform(rng, 0, 7) * 0.1;
    }
    call.training = test::coin(rng);
    call.dropout = call.training && test::coin(rng) ? 0.25 : 0.0;
    call.seed = rng();
    const BlockMask mask =
        compile_block_mask(call, test::uniform(rng, 1, 20), test::uniform(rng, 1, 20));
    call.block_mask = test::coin(rng) ? &mask : nullptr;
    // The reference scales kept weights by 1 / (1 - rate) rounded to float.
    expect_kernels_agree(call, call.dropout > 0 ? 1e-6 : 1e-9);
    if (HasFailure()) break;
  }
}

TEST(FusedKernel, Bfloat16ComputesInFloat) {
  Problem p;
  p.dtype = torch::kBFloat16;
  p.lq = p.lk = 40;
  p.padding = true;
  p.make();
  const Outcome fused = run(p.call(), Kernel::Fused);
  EXPECT_EQ(fused.out.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(fused.dq.scalar_type(), torch::kBFloat16);
  Problem exact = p;
  exact.dtype = torch::kFloat;
  exact.q = p.q.to(torch::kFloat), exact.k = p.k.to(torch::kFloat), exact.v = p.v.to(torch::kFloat);
  const Outcome reference = run(exact.call(), Kernel::Reference);
  expect_close(fused.out.to(torch::kFloat), reference.out, 2e-2, "output");
  expect_close(fused.dv.to(torch::kFloat), reference.dv, 5e-2, "dv");
}

TEST(FusedKernel, DeterministicForAFixedThreadCount) {
  Problem p;
  p.dtype = torch::kFloat;
  p.batch = 1, p.heads = 1;  // backward splits the query tiles into chunks
  p.lq = p.lk = 96;
  Relation hibrids;
  hibrids.kind = RelationKind::Hibrids;
  p.spec = spec_of({head(kFusedSection || Mask::window(8, 8))}, hibrids);
  p.q_tile = 16, p.k_tile = 16;
  p.make();
  const Outcome a = run(p.call(), Kernel::Fused), b = run(p.call(), Kernel::Fused);
  EXPECT_TRUE(torch::equal(a.out, b.out));
  EXPECT_TRUE(torch::equal(a.dk, b.dk));
  EXPECT_TRUE(torch::equal(a.dv, b.dv));
  EXPECT_TRUE(torch::equal(a.dtable, b.dtable));
  expect_kernels_agree(p.call(), 2e-5);
}

// Central differences of sum(out * w) against the fused backward, in double.
TEST(FusedKernel, FiniteDifferenceGradients) {
  Problem p;
  p.batch = 1, p.heads = 2, p.lq = 9, p.lk = 11, p.prefix = 2, p.dim = 3;
  Relation t5;
  t5.kind = RelationKind::T5Buckets;
  t5.buckets = 8, t5.max_distance = 10;
  p.dense_shape = {1, 2};
  p.padding = true;
  p.spec = spec_of(
      {head(Mask::window(3, 2) || Mask::global(1)), head(Mask::all(), NormaliserKind::Gumbel, 0.7)},
      t5, true);
  p.training = true;
  p.q_tile = 4, p.k_tile = 4;
  p.make();
  const Outcome fused = run(p.call(), Kernel::Fused);
  auto generator = at::detail::createCPUGenerator(99);
  const at::Tensor weights = at::randn(fused.out.sizes(), generator, torch::kDouble);
  auto loss = [&] { return (attend(p.call(), Kernel::Fused) * weights).sum().item<double>(); };
  const double h = 1e-6;
  auto check = [&](at::Tensor input, const at::Tensor& grad, const char* name) {
    EXPECT_GT(grad.abs().max().item<double>(), 0) << name;
    auto flat = input.view({-1});
    auto g = grad.reshape({-1});
    for (std::int64_t e = 0; e < flat.numel(); ++e) {
      const double x = flat[e].item<double>();
      flat[e] = x + h;
      const double up = loss();
      flat[e] = x - h;
      const double down = loss();
      flat[e] = x;
      EXPECT_NEAR((up - down) / (2 * h), g[e].item<double>(), 1e-6) << name << "[" << e << "]";
    }
  };
  check(p.q, fused.dq, "q");
  check(p.k, fused.dk, "k");
  check(p.v, fused.dv, "v");
  check(p.bias_table, fused.dtable, "bias_table");
  check(p.dense_bias, fused.ddense, "dense_bias");
}

TEST(FusedKernel, NonContiguousInputsAndPartialGradients) {
  Problem p;
  p.lq = p.lk = 50;
  p.causal = true;
  p.make();
  AttentionCall c = p.call();
  // [B, L, H, D] storage seen as [B, H, L, D], as models produce it.
  c.q = p.q.transpose(1, 2).contiguous().transpose(1, 2).requires_grad_(true);
  c.k = p.k.transpose(1, 2).contiguous().transpose(1, 2);
  ASSERT_FALSE(c.q.is_contiguous());
  const at::Tensor out = attend(c, Kernel::Fused);
  out.sum().backward();
  EXPECT_FALSE(c.k.grad().defined());
  AttentionCall r = p.call();
  r.q = p.q.clone().requires_grad_(true);
  const at::Tensor expected = attend(r, Kernel::Reference);
  expected.sum().backward();
  EXPECT_LE((out - expected).abs().max().item<double>(), 1e-9);
  EXPECT_LE((c.q.grad() - r.q.grad()).abs().max().item<double>(), 1e-9);
  // Without gradients there is no graph to keep.
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(attend(c, Kernel::Fused).requires_grad());
}

// Heads viewed from a projection's output ([B, L, H, D] in memory) are read and written in
// place: the output and dq, dk, dv come back in the inputs' layout, with the reference's
// values, also when a gradient arrives in that layout, when one (b, h) is split across
// threads (batch 1, one head), and when rows lie so far apart (4 heads x 40) that the kernel
// works on a copy of each head (fused_plan.h, HeadCopy).
TEST(FusedKernel, HeadsViewedFromAProjectionKeepTheirLayout) {
  const int threads = at::get_num_threads();
  at::set_num_threads(2);
  struct Shape {
    std::int64_t batch, heads, dim;
  };
  for (const Shape shape : {Shape{1, 1, 8}, Shape{2, 2, 8}, Shape{2, 4, 40}}) {
    ASSERT_EQ(shape.heads * shape.dim >= kPackRowsApart, shape.dim == 40);
    Problem p;
    p.batch = shape.batch;
    p.heads = shape.heads;
    p.dim = shape.dim;
    p.lq = p.lk = 90;
    p.spec = spec_of(std::vector<HeadSpec>(static_cast<std::size_t>(shape.heads), head(Mask::window(20, 20))));
    p.q_tile = p.k_tile = 16;
    p.make();
    auto projected = [](const at::Tensor& t) {
      return t.transpose(1, 2).contiguous().transpose(1, 2).requires_grad_(true);
    };
    AttentionCall c = p.call();
    c.q = projected(p.q), c.k = projected(p.k), c.v = projected(p.v);
    const at::Tensor out = attend(c, Kernel::Fused);
    EXPECT_EQ(out.strides(), c.q.strides());
    // The gradient arrives as an output projection sends it: [B, L, H, D] in memory.
    const at::Tensor weights = projected(torch::randn(out.sizes(), torch::kDouble)).detach();
    out.backward(weights);
    EXPECT_EQ(c.q.grad().strides(), c.q.strides());
    EXPECT_EQ(c.k.grad().strides(), c.k.strides());
    EXPECT_EQ(c.v.grad().strides(), c.v.strides());

    AttentionCall r = p.call();
    r.q = p.q.clone().requires_grad_(true), r.k = p.k.clone().requires_grad_(true);
    r.v = p.v.clone().requires_grad_(true);
    const at::Tensor expected = attend(r, Kernel::Reference);
    expected.backward(weights.contiguous());
    expect_close(out, expected, 1e-9, "output");
    expect_close(c.q.grad(), r.q.grad(), 1e-9, "dq");
    expect_close(c.k.grad(), r.k.grad(), 1e-9, "dk");
    expect_close(c.v.grad(), r.v.grad(), 1e-9, "dv");
  }
  at::set_num_threads(threads);
}

TEST(FusedKernel, EmptyQueriesOrKeys) {
  Problem p;
  p.lq = 0, p.lk = 5;
  p.make();
  EXPECT_EQ(attend(p.call(), Kernel::Fused).sizes(), (std::vector<std::int64_t>{2, 2, 0, 8}));
  Problem q;
  q.lq = 6, q.lk = 0;
  q.make();
  const Outcome fused = run(q.call(), Kernel::Fused);
  EXPECT_TRUE(fused.out.eq(0).all().item<bool>());
  EXPECT_TRUE(fused.dq.eq(0).all().item<bool>());
}

TEST(FusedKernel, RejectsMismatchedInputs) {
  Problem p;
  p.make();
  AttentionCall c = p.call();
  c.v = c.v.to(torch::kFloat);
  EXPECT_NE(test_support::error_of([&] { attend(c, Kernel::Fused); }).find("dtypes differ"),
            std::string::npos);
  c = p.call();
  c.v = c.v.narrow(2, 0, 10);
  EXPECT_NE(test_support::error_of([&] { attend(c, Kernel::Fused); }).find("must be"),
            std::string::npos);
  Problem other = p;
  other.lq = 20;
  other.make();
  const BlockMask wrong = compile_block_mask(other.call());
  c = p.call();
  c.block_mask = &wrong;
  EXPECT_NE(test_support::error_of([&] { attend(c, Kernel::Fused); }).find("block_mask"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::attn
