#include "reference.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "strata/attn/counter_random.h"
#include "fused_tiles.h"
#include "query_votes.h"
#include "strata/attn/pair_rules.h"

namespace strata::attn {

namespace {

// Causality and padding only, with tensor ops: a plain spec needs no per-pair loop.
at::Tensor plain_visibility(const AttentionCall& call) {
  const std::int64_t lq = call.q.size(2);
  const std::int64_t lk = call.k.size(2) - call.prefix_len;
  const auto bool_options = torch::TensorOptions().dtype(torch::kBool).device(call.q.device());
  at::Tensor visible;  // [B or 1, 1, Lq, Lk] over the keys proper
  if (call.causal) {
    const auto i = torch::arange(lq, bool_options.dtype(torch::kInt64)).unsqueeze(1);
    const auto j = torch::arange(lk, bool_options.dtype(torch::kInt64)).unsqueeze(0);
    visible = (j <= i + call.query_offset).view({1, 1, lq, lk});
  }
  if (call.key_padding.defined()) {
    const auto keys = call.key_padding.to(call.q.device(), torch::kBool).view({-1, 1, 1, lk});
    visible = visible.defined() ? visible.logical_and(keys) : keys.expand({-1, 1, lq, lk});
  }
  if (!visible.defined()) return visible;
  if (call.prefix_len > 0) {
    const auto prefix = torch::ones({visible.size(0), 1, lq, call.prefix_len}, bool_options);
    visible = torch::cat({prefix, visible.expand({-1, 1, lq, lk})}, 3);
  }
  return visible;
}

// [B, H, Lq, P + Lk], pair by pair from the element rule.
at::Tensor spec_visibility(const PairRules& rules, const at::Device& device) {
  at::Tensor visible =
      torch::empty({rules.batch(), rules.heads(), rules.queries(), rules.keys()}, torch::kBool);
  auto v = visible.accessor<bool, 4>();
  for (std::int64_t b = 0; b < rules.batch(); ++b)
    for (std::int64_t h = 0; h < rules.heads(); ++h)
      for (std::int64_t i = 0; i < rules.queries(); ++i)
        for (std::int64_t n = 0; n < rules.keys(); ++n) v[b][h][i][n] = rules.visible(b, h, i, n);
  return visible.to(device);
}

// bias_table[h][relation(b, i, n)] as [B, H, Lq, P + Lk], 0 where there is no relation; a
// gather, so autograd gives the table its gradient.
at::Tensor relation_bias(const PairRules& rules, const at::Tensor& table) {
  const std::int64_t count = table.size(1);
  at::Tensor ids = torch::empty({rules.batch(), rules.queries(), rules.keys()}, torch::kInt64);
  auto id = ids.accessor<std::int64_t, 3>();
  for (std::int64_t b = 0; b < rules.batch(); ++b)
    for (std::int64_t i = 0; i < rules.queries(); ++i)
      for (std::int64_t n = 0; n < rules.keys(); ++n) {
        const std::int32_t r = rules.relation(b, i, n);
        id[b][i][n] = r < 0 ? count : r;  // column `count` of the extended table is 0
      }
  const at::Tensor extended =
      torch::cat({table, torch::zeros({table.size(0), 1}, table.options())}, 1);
  return extended.index_select(1, ids.flatten().to(table.device()))
      .view({table.size(0), rules.batch(), rules.queries(), rules.keys()})
      .permute({1, 0, 2, 3});
}

// Gumbel noise of head h for every (b, i, n): [B, Lq, P + Lk], drawn as the fused kernel draws
// it (tiles::add_gumbel), so both kernels add the same noise to the bit.
at::Tensor gumbel_noise(const PairRules& rules, std::uint64_t seed, std::int64_t h) {
  at::Tensor noise = torch::zeros({rules.batch(), rules.queries(), rules.keys()}, torch::kFloat);
  float* g = noise.data_ptr<float>();
  for (std::int64_t b = 0; b < rules.batch(); ++b)
    for (std::int64_t i = 0; i < rules.queries(); ++i)
      tiles::add_gumbel(g + (b * rules.queries() + i) * rules.keys(),
                        counter_row(seed, RandomStream::Gumbel, b, h, i), 0, rules.keys());
  return noise;
}

// Top-p keep mask [B, P + Lk] of one head from its weights a [B, Lq, P + Lk] (spec.h: TopP):
// the impact is sum_i a[i][n] over the voting queries i (votes [B, Lq], query_votes.h;
// undefined = all).
at::Tensor top_p_keep(const at::Tensor& a, const at::Tensor& votes, double p) {
  at::Tensor weights = a.detach();
  if (votes.defined()) weights = weights * votes.to(a.device(), a.scalar_type()).unsqueeze(2);
  return top_p_keep_from_impact(weights.sum(1), p).to(a.device(), a.scalar_type());
}

// Dropout's keep-and-scale factors [B, H, Lq, P + Lk] from the counter-based generator.
at::Tensor dropout_scale(const PairRules& rules, std::uint64_t seed, double rate) {
  at::Tensor scale =
      torch::empty({rules.batch(), rules.heads(), rules.queries(), rules.keys()}, torch::kFloat);
  const float kept = rate < 1 ? static_cast<float>(1.0 / (1.0 - rate)) : 0.0f;
  auto s = scale.accessor<float, 4>();
  for (std::int64_t b = 0; b < rules.batch(); ++b)
    for (std::int64_t h = 0; h < rules.heads(); ++h)
      for (std::int64_t i = 0; i < rules.queries(); ++i)
        for (std::int64_t n = 0; n < rules.keys(); ++n)
          s[b][h][i][n] = counter_keep(seed, rate, b, h, i, n) ? kept : 0.0f;
  return scale;
}

}  // namespace

at::Tensor masked_softmax(at::Tensor scores, const at::Tensor& visible) {
  if (!visible.defined()) return torch::softmax(scores, -1);
  scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor row_sees_any = visible.any(-1, /*keepdim=*/true);
  if (row_sees_any.all().item<bool>()) return torch::softmax(scores, -1);
  scores = scores.masked_fill(row_sees_any.logical_not(), 0.0);
  return torch::softmax(scores, -1) * row_sees_any;
}

at::Tensor top_p_keep_from_impact(const at::Tensor& key_impact, double p) {
  const at::Tensor impact = key_impact.to(torch::kCPU, torch::kDouble).contiguous();
  at::Tensor keep = torch::zeros(impact.sizes(), torch::kFloat);
  auto kept = keep.accessor<float, 2>();
  const std::int64_t keys = impact.size(1);
  for (std::int64_t b = 0; b < impact.size(0); ++b) {
    const double* m = impact.data_ptr<double>() + b * keys;
    const double total = std::accumulate(m, m + keys, 0.0);
    if (!(total > 0)) continue;  // no query sees any key: nothing to keep
    std::vector<std::int64_t> order(keys);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return m[x] > m[y]; });
    double mass = 0;
    for (std::int64_t n : order) {
      kept[b][n] = 1.0f;
      mass += m[n] / total;
      if (mass >= p) break;
    }
  }
  return keep;
}

at::Tensor dense_visibility(const AttentionCall& call) {
  const PairRules rules(call);
  return rules.spec().is_plain() ? plain_visibility(call) : spec_visibility(rules, call.q.device());
}

at::Tensor reference_attention(const AttentionCall& call, at::Tensor* weights) {
  const PairRules rules(call);  // checks the call against its spec
  const at::Tensor votes = query_votes(call);
  const LayerSpec& spec = rules.spec();
  const double scale = 1.0 / std::sqrt(static_cast<double>(call.q.size(3)));
  at::Tensor scores = torch::matmul(call.q * scale, call.k.transpose(2, 3));
  at::Tensor probs;
  if (spec.is_plain()) {
    probs = masked_softmax(scores, plain_visibility(call));
  } else {
    const at::Tensor visible = spec_visibility(rules, call.q.device());
    if (rules.has_relation()) scores = scores + relation_bias(rules, call.bias_table);
    if (call.dense_bias.defined()) scores = scores + call.dense_bias;
    std::vector<at::Tensor> heads;
    for (std::int64_t h = 0; h < rules.heads(); ++h) {
      const HeadSpec& head = spec.head(h);
      const at::Tensor s = scores.select(1, h), seen = visible.select(1, h);
      if (head.fixed != FixedPattern::None) {
        heads.push_back(seen.to(scores.scalar_type()));  // one-hot on the fixed key
        continue;
      }
      const Normaliser& norm = head.normaliser;
      switch (norm.kind) {
        case NormaliserKind::Softmax: heads.push_back(masked_softmax(s, seen)); break;
        case NormaliserKind::Gumbel: {
          const at::Tensor noisy =
              call.training ? s + gumbel_noise(rules, call.seed, h).to(s.device(), s.scalar_type())
                            : s;
          heads.push_back(masked_softmax(noisy / norm.tau, seen));
          break;
        }
        case NormaliserKind::TopP: {
          const at::Tensor a = masked_softmax(s, seen);
          heads.push_back(a * top_p_keep(a, votes, norm.p).unsqueeze(1));
          break;
        }
      }
    }
    probs = torch::stack(heads, 1);
  }
  if (weights != nullptr) *weights = probs;
  if (call.training && call.dropout > 0)
    probs = probs *
            dropout_scale(rules, call.seed, call.dropout).to(probs.device(), probs.scalar_type());
  return torch::matmul(probs, call.v);
}

}  // namespace strata::attn
