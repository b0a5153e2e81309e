#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/attn/attention_call.h"
#include "strata/attn/kept_call.h"
#include "strata/core/error.h"
#include "strata/nn/multi_head_attention.h"

namespace strata {
namespace {

// Attention written out pair by pair, the slowest and plainest form.
at::Tensor loop_attention(const attn::AttentionCall& c) {
  const auto B = c.q.size(0), H = c.q.size(1), Lq = c.q.size(2), Lk = c.k.size(2), D = c.q.size(3);
  at::Tensor out = torch::zeros_like(c.q);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Lq; ++i) {
        std::vector<double> w(Lk, 0.0);
        double max_score = -INFINITY;
        for (int64_t j = 0; j < Lk; ++j) {
          const int64_t key = j - c.prefix_len;  // < 0: a prefix slot
          bool visible = true;
          if (key >= 0 && c.causal && key > i + c.query_offset) visible = false;
          if (key >= 0 && c.key_padding.defined() && !c.key_padding[b][key].item<bool>()) visible = false;
          if (!visible) continue;
          w[j] = (c.q[b][h][i] * c.k[b][h][j]).sum().item<double>() / std::sqrt(double(D));
          max_score = std::max(max_score, w[j]);
        }
        double total = 0;
        std::vector<bool> seen(Lk, false);
        for (int64_t j = 0; j < Lk; ++j) {
          const int64_t key = j - c.prefix_len;
          bool visible = !(key >= 0 && c.causal && key > i + c.query_offset) &&
                         !(key >= 0 && c.key_padding.defined() && !c.key_padding[b][key].item<bool>());
          seen[j] = visible;
          if (visible) total += std::exp(w[j] - max_score);
        }
        for (int64_t j = 0; j < Lk; ++j)
          if (seen[j]) out[b][h][i] += c.v[b][h][j] * (std::exp(w[j] - max_score) / total);
      }
  return out;
}

attn::AttentionCall random_call(int64_t B, int64_t H, int64_t Lq, int64_t Lk, int64_t D) {
  attn::AttentionCall c;
  c.q = torch::randn({B, H, Lq, D}, torch::kFloat64);
  c.k = torch::randn({B, H, Lk, D}, torch::kFloat64);
  c.v = torch::randn({B, H, Lk, D}, torch::kFloat64);
  return c;
}

TEST(ReferenceAttention, MatchesPairByPairAttention) {
  torch::manual_seed(1);
  attn::AttentionCall c = random_call(2, 3, 5, 7, 4);
  EXPECT_TRUE(torch::allclose(attn::attend(c, attn::Kernel::Reference), loop_attention(c), 1e-9, 1e-9));
}

TEST(ReferenceAttention, CausalWithOffsetPaddingAndPrefix) {
  torch::manual_seed(2);
  attn::AttentionCall c = random_call(2, 2, 3, 2 + 6, 4);
  c.prefix_len = 2;
  c.causal = true;
  c.query_offset = 3;  // queries are positions 3, 4, 5 of six keys
  c.key_padding = torch::tensor({1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0}, torch::kBool).view({2, 6});
  EXPECT_TRUE(torch::allclose(attn::attend(c, attn::Kernel::Reference), loop_attention(c), 1e-9, 1e-9));
}

TEST(ReferenceAttention, ARowThatSeesNoKeyGivesZerosAndFiniteGradients) {
  torch::manual_seed(3);
  attn::AttentionCall c = random_call(2, 1, 3, 3, 4);
  c.q.requires_grad_(true);
  c.k.requires_grad_(true);
  c.v.requires_grad_(true);
  c.key_padding = torch::tensor({1, 1, 1, 0, 0, 0}, torch::kBool).view({2, 3});  // row 1: all padding
  const at::Tensor out = attn::attend(c, attn::Kernel::Reference);
  EXPECT_TRUE(out[1].eq(0).all().item<bool>());
  EXPECT_TRUE(torch::allclose(out[0], loop_attention(c)[0]));
  out.sum().backward();
  for (const at::Tensor& t : {c.q, c.k, c.v}) EXPECT_TRUE(t.grad().isfinite().all().item<bool>());
  EXPECT_TRUE(c.v.grad()[1].eq(0).all().item<bool>());
}

TEST(ReferenceAttention, GradientsPassGradcheck) {
  torch::manual_seed(4);
  attn::AttentionCall c = random_call(1, 2, 4, 4, 3);
  c.causal = true;
  auto f = [&](const std::vector<at::Tensor>& x) {
    attn::AttentionCall d = c;
    d.q = x[0];
    d.k = x[1];
    d.v = x[2];
    return attn::attend(d, attn::Kernel::Reference);
  };
  std::vector<at::Tensor> inputs = {c.q.requires_grad_(true), c.k.requires_grad_(true), c.v.requires_grad_(true)};
  const at::Tensor out = f(inputs);
  const at::Tensor weights = torch::randn_like(out);
  const auto grads = torch::autograd::grad({(out * weights).sum()}, inputs);
  // Central differences on a few coordinates of each input.
  for (size_t t = 0; t < inputs.size(); ++t)
    for (int64_t idx : {0, 5, 11}) {
      auto flat = inputs[t].detach().clone().view(-1);
      const double h = 1e-6;
      std::vector<at::Tensor> plus = {inputs[0].detach(), inputs[1].detach(), inputs[2].detach()};
      std::vector<at::Tensor> minus = plus;
      plus[t] = plus[t].clone();
      plus[t].view(-1)[idx] += h;
      minus[t] = minus[t].clone();
      minus[t].view(-1)[idx] -= h;
      const double numeric = ((f(plus) * weights).sum() - (f(minus) * weights).sum()).item<double>() / (2 * h);
      EXPECT_NEAR(grads[t].reshape(-1)[idx].item<double>(), numeric, 1e-6) << "input " << t << " index " << idx;
    }
}

TEST(AttentionKernel, UnknownNameListsKnownOnes) {
  try {
    attn::kernel_from_name("flash");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: reference"), std::string::npos);
  }
}

TEST(MultiHeadAttention, PrefixSlotsActAsExtraKeysForEveryQuery) {
  torch::manual_seed(5);
  nn::AttentionOptions options;
  options.d_model = 8;
  options.heads = 2;
  nn::MultiHeadAttention mha(options);
  mha->eval();
  const at::Tensor x = torch::randn({1, 4, 8});
  // Prefix slots that repeat the keys and values of the input's first two tokens.
  const at::Tensor k = mha->k_proj(x).view({1, 4, 2, 4}).transpose(1, 2);
  const at::Tensor v = mha->v_proj(x).view({1, 4, 2, 4}).transpose(1, 2);
  const nn::PrefixKv prefix{k.narrow(2, 0, 2), v.narrow(2, 0, 2), /*segment=*/at::Tensor()};
  const at::Tensor with_prefix = mha->self_attention(x, at::Tensor(), /*causal=*/true, nullptr, {.prefix = &prefix});
  // Query 0 sees the prefix copies of tokens 0 and 1 plus token 0 itself: weights over
  // {0, 0, 1}, so its output differs from plain causal attention (which sees token 0 only).
  const at::Tensor plain = mha->self_attention(x, at::Tensor(), /*causal=*/true);
  EXPECT_FALSE(torch::allclose(with_prefix[0][0], plain[0][0]));
  // Query 3 sees tokens 0..3 plus copies of 0 and 1: the same as attending without causality
  // to [x0, x1, x0, x1, x2, x3].
  const at::Tensor doubled = torch::cat({x.narrow(1, 0, 2), x}, 1);
  const at::Tensor full = mha->self_attention(doubled, at::Tensor(), /*causal=*/false);
  EXPECT_TRUE(torch::allclose(with_prefix[0][3], full[0][5], 1e-5, 1e-6));
}

TEST(MultiHeadAttention, RejectsHeadsThatDoNotDivideTheWidth) {
  nn::AttentionOptions options;
  options.d_model = 10;
  options.heads = 3;
  EXPECT_THROW(nn::MultiHeadAttention{options}, Error);
}

// A kept call (attn/kept_call.h) is the call the module made: its weights recomputed band by
// band are the weights the module records, with prefix slots and causality.
TEST(MultiHeadAttention, AKeptCallGivesTheRecordedWeights) {
  torch::manual_seed(11);
  nn::AttentionOptions options;
  options.d_model = 8;
  options.heads = 2;
  nn::MultiHeadAttention mha(options);
  mha->eval();
  const at::Tensor x = torch::randn({1, 6, 8});
  const nn::PrefixKv prefix{torch::randn({1, 2, 3, 4}), torch::randn({1, 2, 3, 4}), at::Tensor()};
  EXPECT_EQ(mha->kept_call(), nullptr);
  mha->record_weights(true);
  mha->keep_calls(true);
  mha->self_attention(x, at::Tensor(), /*causal=*/true, nullptr, {.prefix = &prefix});
  ASSERT_NE(mha->kept_call(), nullptr);
  const attn::BandWeights weights(*mha->kept_call());
  const at::Tensor banded = torch::cat({weights.rows(0, 4), weights.rows(4, 6)}, 1);
  EXPECT_TRUE(torch::allclose(banded, mha->recorded_weights()[0], 1e-5, 1e-6));
  mha->keep_calls(false);
  EXPECT_EQ(mha->kept_call(), nullptr);
}

}  // namespace
}  // namespace strata
