// A kept call's weights recomputed band by band are the reference kernel's weights, for every
// spec the engine runs (random masks, relations, fixed heads, dense biases, prefixes, causal
// calls with offsets, padding, Gumbel and top-p normalisers); and a kept call owns what it read.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <random>

#include "attn/kernels/reference.h"
#include "random_calls.h"
#include "strata/attn/kept_call.h"
#include "strata/core/error.h"

namespace strata::attn {
namespace {

// Gumbel and top-p normalisers on some heads (random_call gives softmax ones).
void vary_normalisers(std::mt19937& rng, test::RandomCall& r) {
  for (HeadSpec& head : r.spec.heads) {
    const std::int64_t kind = test::uniform(rng, 0, 3);
    if (kind == 1) head.normaliser = {.kind = NormaliserKind::Gumbel, .tau = 0.5};
    if (kind == 2) head.normaliser = {.kind = NormaliserKind::TopP, .p = 0.7};
  }
}

TEST(KeptCall, BandWeightsAreTheReferenceKernelsWeightsBandByBand) {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 200; ++trial) {
    const auto r = test::random_call(rng, {.max_batch = 1});
    vary_normalisers(rng, *r);
    if (test::coin(rng, 0.3)) {  // some padded queries, which do not vote for top-p keys
      r->call.query_padding = torch::rand({1, r->call.q.size(2)}).gt(0.3);
    }
    at::Tensor expected;
    reference_attention(r->call, &expected);  // [1, H, Lq, P + Lk]
    const KeptCall kept = KeptCall::of(r->call);
    const BandWeights weights(kept);
    const std::int64_t lq = kept.queries(), band = test::uniform(rng, 1, 7);
    for (std::int64_t q0 = 0; q0 < lq; q0 += band) {
      const std::int64_t q1 = std::min(lq, q0 + band);
      at::Tensor visible;
      const at::Tensor got = weights.rows(q0, q1, &visible);
      ASSERT_TRUE(torch::allclose(got, expected[0].narrow(1, q0, q1 - q0), 1e-5, 1e-6))
          << "trial " << trial << ", queries [" << q0 << ", " << q1 << "), spec " << to_string(r->spec);
      const at::Tensor dense = dense_visibility(r->call);
      const at::Tensor dense_rows = dense.defined() ? dense[0].expand({kept.heads(), lq, kept.keys()}).narrow(1, q0, q1 - q0)
                                                    : torch::ones({kept.heads(), q1 - q0, kept.keys()}, torch::kBool);
      ASSERT_TRUE(torch::equal(visible, dense_rows)) << "trial " << trial;
    }
  }
}

// Long calls, so that bands meet several query tiles and skip key tiles.
TEST(KeptCall, BandWeightsSkipOnlyTilesWhereNoPairIsVisible) {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 30; ++trial) {
    const auto r = test::random_call(rng, {.max_batch = 1, .max_len = 300});
    vary_normalisers(rng, *r);
    at::Tensor expected;
    reference_attention(r->call, &expected);
    const KeptCall kept = KeptCall::of(r->call);
    const BandWeights weights(kept);
    const std::int64_t lq = kept.queries(), band = test::uniform(rng, 16, 128);
    for (std::int64_t q0 = 0; q0 < lq; q0 += band) {
      const std::int64_t q1 = std::min(lq, q0 + band);
      ASSERT_TRUE(torch::allclose(weights.rows(q0, q1), expected[0].narrow(1, q0, q1 - q0), 1e-5, 1e-6))
          << "trial " << trial << ", queries [" << q0 << ", " << q1 << "), spec " << to_string(r->spec);
    }
  }
}

TEST(KeptCall, OwnsWhatItReadAndRefusesBatches) {
  std::mt19937 rng(7);
  std::unique_ptr<KeptCall> kept;
  at::Tensor expected;
  {
    const auto r = test::random_call(rng, {.max_batch = 1});
    reference_attention(r->call, &expected);
    kept = std::make_unique<KeptCall>(KeptCall::of(r->call));
  }  // the call's spec and layouts are gone
  const BandWeights weights(*kept);
  EXPECT_TRUE(torch::allclose(weights.rows(0, kept->queries()), expected[0], 1e-5, 1e-6));
  EXPECT_THROW(weights.rows(0, kept->queries() + 1), Error);

  AttentionCall two;
  two.q = torch::randn({2, 1, 3, 4});
  two.k = two.v = torch::randn({2, 1, 3, 4});
  EXPECT_THROW(KeptCall::of(two), Error);
}

}  // namespace
}  // namespace strata::attn
