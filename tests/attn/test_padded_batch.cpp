// Padding is invisible: an example padded into a batch gets exactly what it gets alone, for
// every normaliser and both kernels: outputs, and the gradients of q, k, v and the bias table.
// Padded positions hold random values, not zeros, so anything that reads them shows. For
// TruncSA this is the padded queries not voting in the key impact (spec.h: TopP).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "strata/attn/attention_call.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

constexpr std::int64_t kHeads = 2, kDim = 8;
// Row 0 is padded; 70 queries span two of the fused kernel's 64-query tiles, and the 45- and
// 23-token examples leave a tile of the batch with padded queries only.
const std::vector<std::int64_t> kLengths = {45, 70, 23};

struct Case {
  std::string name;
  std::optional<LayerSpec> spec;  // nullopt = plain attention
  std::int64_t prefix = 0;
  bool causal = false;
  bool training = false;
};

Normaliser softmax() { return {}; }
Normaliser gumbel(double tau) { return {.kind = NormaliserKind::Gumbel, .tau = tau}; }
Normaliser top_p(double p) { return {.kind = NormaliserKind::TopP, .p = p}; }

// One head spec per normaliser given (one for all heads when one is given), with a T5
// relative-position bias table when `table`.
LayerSpec spec_of(std::vector<Normaliser> normalisers, bool table, Mask mask = Mask::all()) {
  LayerSpec spec;
  spec.heads.clear();
  for (const Normaliser& n : normalisers) spec.heads.push_back({.mask = mask, .normaliser = n});
  if (table) spec.bias = {.kind = RelationKind::T5Buckets, .buckets = 8, .max_distance = 12};
  return spec;
}

std::vector<Case> cases() {
  const Mask local = Mask::window(6, 6) || Mask::global(1);
  return {
      {"softmax_plain", std::nullopt},
      {"softmax_window_table_prefix", spec_of({softmax()}, true, local), 3},
      {"gumbel_eval_table_prefix", spec_of({gumbel(0.7)}, true), 3},
      {"gumbel_training_table_prefix", spec_of({gumbel(0.7)}, true), 3, false, true},
      {"top_p_table", spec_of({top_p(0.8)}, true)},
      {"top_p_table_prefix", spec_of({top_p(0.9)}, true), 4},
      {"top_p_causal_prefix", spec_of({top_p(0.7)}, false), 2, true},
      {"top_p_and_softmax_heads_table_prefix", spec_of({top_p(0.85), softmax()}, true), 2},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

struct Inputs {
  at::Tensor q, k, v, table;  // leaves that collect gradients; table undefined without one
};

struct Result {
  at::Tensor out, dq, dk, dv, dtable;
};

// attend() and backward from sum(out * loss_weights).
Result run(const Case& c, Kernel kernel, Inputs in, const at::Tensor& padding,
           const at::Tensor& loss_weights) {
  for (at::Tensor* t : {&in.q, &in.k, &in.v, &in.table})
    if (t->defined()) *t = t->detach().clone().requires_grad_(true);
  AttentionCall call;
  call.q = in.q, call.k = in.k, call.v = in.v;
  call.key_padding = padding;
  call.query_padding = padding;  // self-attention: the queries are the keys proper
  call.causal = c.causal;
  call.prefix_len = c.prefix;
  call.training = c.training;
  call.seed = 11;
  call.spec = c.spec ? &*c.spec : nullptr;
  call.bias_table = in.table;
  Result r;
  r.out = attend(call, kernel);
  (r.out * loss_weights).sum().backward();
  r.out = r.out.detach();
  r.dq = in.q.grad(), r.dk = in.k.grad(), r.dv = in.v.grad();
  if (in.table.defined()) r.dtable = in.table.grad();
  return r;
}

void expect_same(const at::Tensor& batch, const at::Tensor& alone, const std::string& what) {
  ASSERT_EQ(batch.sizes(), alone.sizes()) << what;
  EXPECT_TRUE(torch::allclose(batch, alone, 1e-9, 1e-12))
      << what << ": max difference " << (batch - alone).abs().max().item<double>();
}

class PaddedBatch : public ::testing::TestWithParam<std::tuple<Kernel, Case>> {};

TEST_P(PaddedBatch, EachExampleGetsWhatItGetsAlone) {
  const auto& [kernel, c] = GetParam();
  const std::int64_t batch = static_cast<std::int64_t>(kLengths.size());
  const std::int64_t length = *std::max_element(kLengths.begin(), kLengths.end());
  const std::int64_t prefix = c.prefix;
  torch::manual_seed(3);
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  Inputs in{torch::randn({batch, kHeads, length, kDim}, options),
            torch::randn({batch, kHeads, prefix + length, kDim}, options),
            torch::randn({batch, kHeads, prefix + length, kDim}, options),
            {}};
  if (c.spec && c.spec->bias.kind != RelationKind::None)
    in.table = torch::randn({kHeads, relation_count(c.spec->bias)}, options);
  at::Tensor padding = torch::zeros({batch, length}, torch::kBool);
  for (std::int64_t b = 0; b < batch; ++b) padding[b].narrow(0, 0, kLengths[b]).fill_(true);

  // Gumbel noise while training is keyed by the batch row (counter_random.h: seed, b, h, i,
  // n), so an example alone, at row 0, draws row 0's noise: only the batch's row 0 can be
  // compared. Its loss alone then makes the table's gradient comparable too. Eval mode has
  // no noise, and every row is compared.
  const std::int64_t compared = c.training ? 1 : batch;
  at::Tensor weights = torch::randn({batch, kHeads, length, kDim}, options);
  weights *= padding.view({batch, 1, length, 1});  // padded queries' outputs are not used
  weights.narrow(0, compared, batch - compared).zero_();
  const Result together = run(c, kernel, in, padding, weights);

  at::Tensor dtable_alone = in.table.defined() ? torch::zeros_like(in.table) : at::Tensor();
  for (std::int64_t b = 0; b < compared; ++b) {
    SCOPED_TRACE("example " + std::to_string(b));
    const std::int64_t len = kLengths[b], keys = prefix + len;
    auto alone_rows = [&](const at::Tensor& t, std::int64_t rows) {
      return t.narrow(0, b, 1).narrow(2, 0, rows).contiguous();
    };
    const Inputs one{alone_rows(in.q, len), alone_rows(in.k, keys), alone_rows(in.v, keys),
                     in.table};
    const Result alone = run(c, kernel, one, at::Tensor(), alone_rows(weights, len));
    expect_same(alone_rows(together.out, len), alone.out, "output");
    expect_same(alone_rows(together.dq, len), alone.dq, "dq");
    expect_same(alone_rows(together.dk, keys), alone.dk, "dk");
    expect_same(alone_rows(together.dv, keys), alone.dv, "dv");
    // Padded keys are seen by no query, padded ones included.
    if (keys < prefix + length) {
      const at::Tensor padded_keys = torch::cat({together.dk[b], together.dv[b]})
                                         .narrow(1, keys, prefix + length - keys);
      EXPECT_EQ(padded_keys.abs().max().item<double>(), 0.0);
    }
    if (alone.dtable.defined()) dtable_alone += alone.dtable;
  }
  if (dtable_alone.defined()) expect_same(together.dtable, dtable_alone, "dtable");
}

INSTANTIATE_TEST_SUITE_P(
    AllNormalisers, PaddedBatch,
    ::testing::Combine(::testing::Values(Kernel::Reference, Kernel::Fused),
                       ::testing::ValuesIn(cases())),
    [](const ::testing::TestParamInfo<PaddedBatch::ParamType>& info) {
      return std::string(kernel_name(std::get<0>(info.param))) + "_" +
             std::get<1>(info.param).name;
    });

// The padded query rows themselves: the fused kernel gives them what the reference gives,
// A · keep, also where they see keys no real query sees (which then carry no impact), with
// few keys kept (the fused kernel recomputes the output over them) or many (it subtracts the
// truncated ones). Cross-attention, so the query padding is not the key padding.
TEST(PaddedBatch, FusedMatchesReferenceOnPaddedQueryRows) {
  constexpr std::int64_t batch = 2, lq = 20, lk = 30, prefix = 2;
  torch::manual_seed(5);
  const auto options = torch::TensorOptions().dtype(torch::kDouble);
  const std::int64_t relations = relation_count(spec_of({softmax()}, true).bias);
  const Inputs in{torch::randn({batch, kHeads, lq, kDim}, options),
                  torch::randn({batch, kHeads, prefix + lk, kDim}, options),
                  torch::randn({batch, kHeads, prefix + lk, kDim}, options),
                  torch::randn({kHeads, relations}, options)};
  at::Tensor key_padding = torch::ones({batch, lk}, torch::kBool);
  key_padding[1].narrow(0, 24, lk - 24).fill_(false);
  at::Tensor query_padding = torch::ones({batch, lq}, torch::kBool);
  query_padding[0].narrow(0, 15, lq - 15).fill_(false);  // keys 17-21 seen by these alone
  query_padding[1].narrow(0, 9, lq - 9).fill_(false);
  const at::Tensor weights = torch::randn({batch, kHeads, lq, kDim}, options);
  for (const double p : {0.3, 0.95}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    const LayerSpec spec = spec_of({top_p(p)}, true, Mask::window(2, 2));
    Result result[2];
    for (const Kernel kernel : {Kernel::Reference, Kernel::Fused}) {
      Inputs leaves = in;
      for (at::Tensor* t : {&leaves.q, &leaves.k, &leaves.v, &leaves.table})
        *t = t->detach().clone().requires_grad_(true);
      AttentionCall call;
      call.q = leaves.q, call.k = leaves.k, call.v = leaves.v;
      call.key_padding = key_padding;
      call.query_padding = query_padding;
      call.prefix_len = prefix;
      call.spec = &spec;
      call.bias_table = leaves.table;
      Result& r = result[kernel == Kernel::Fused];
      r.out = attend(call, kernel);
      (r.out * weights).sum().backward();
      r.out = r.out.detach();
      r.dq = leaves.q.grad(), r.dk = leaves.k.grad(), r.dv = leaves.v.grad();
      r.dtable = leaves.table.grad();
    }
    expect_same(result[1].out, result[0].out, "output");
    expect_same(result[1].dq, result[0].dq, "dq");
    expect_same(result[1].dk, result[0].dk, "dk");
    expect_same(result[1].dv, result[0].dv, "dv");
    expect_same(result[1].dtable, result[0].dtable, "dtable");
  }
}

TEST(PaddedBatch, QueryPaddingOfTheWrongShapeIsAnErrorNamingTheField) {
  for (const Kernel kernel : {Kernel::Reference, Kernel::Fused}) {
    const LayerSpec spec = spec_of({top_p(0.9)}, false);
    AttentionCall call;
    call.q = torch::randn({2, 1, 5, 4});
    call.k = call.v = torch::randn({2, 1, 5, 4});
    call.spec = &spec;
    call.query_padding = torch::ones({2, 6}, torch::kBool);
    const std::string message = test_support::error_of([&] { attend(call, kernel); });
    EXPECT_NE(message.find("query_padding has shape [2, 6], expected [2, 5] or [1, 5]"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace strata::attn
