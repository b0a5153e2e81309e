#include "strata/attn/kept_call.h"

#include <torch/torch.h>

#include <cmath>
#include <string>

#include "kernels/query_votes.h"
#include "kernels/reference.h"
#include "kernels/token_sorted.h"
#include "strata/core/error.h"

namespace strata::attn {

namespace {

at::Tensor detached(const at::Tensor& t) { return t.defined() ? t.detach() : t; }

}  // namespace

KeptCall KeptCall::of(const AttentionCall& call) {
  if (call.q.size(0) != 1) throw Error("a kept attention call has one batch item, got " + std::to_string(call.q.size(0)));
  KeptCall kept;
  kept.q = call.q.detach();
  kept.k = call.k.detach();
  kept.key_padding = detached(call.key_padding);
  kept.query_padding = detached(call.query_padding);
  kept.prefix_segment = detached(call.prefix_segment);
  kept.bias_table = detached(call.bias_table);
  kept.dense_bias = detached(call.dense_bias);
  kept.causal = call.causal;
  kept.query_offset = call.query_offset;
  kept.prefix_len = call.prefix_len;
  if (call.spec) kept.spec = *call.spec;
  if (call.query_layout) kept.query_layout = *call.query_layout;
  if (call.key_layout) kept.key_layout = *call.key_layout;
  return kept;
}

AttentionCall KeptCall::call() const {
  AttentionCall call;
  call.q = q;
  call.k = k;
  call.v = k;
  call.key_padding = key_padding;
  call.query_padding = query_padding;
  call.prefix_segment = prefix_segment;
  call.bias_table = bias_table;
  call.dense_bias = dense_bias;
  call.causal = causal;
  call.query_offset = query_offset;
  call.prefix_len = prefix_len;
  call.spec = spec ? &*spec : nullptr;
  call.query_layout = query_layout ? &*query_layout : nullptr;
  call.key_layout = key_layout ? &*key_layout : nullptr;
  return call;
}

bool KeptCall::runs_token_sorted() const { return token_sorting_applies(call()); }

namespace {

bool has_fixed_head(const LayerSpec& spec) {
  for (const HeadSpec& head : spec.heads)
    if (head.fixed != FixedPattern::None) return true;
  return false;
}

}  // namespace

BandWeights::BandWeights(const KeptCall& call)
    : call_(call),
      view_(call.call()),
      rules_(view_),
      tiles_(compile_block_mask(rules_)),
      // A fixed head's one key lies outside its group's tiles: such calls compute every column.
      every_column_(has_fixed_head(rules_.spec())) {}

BandWeights::Columns BandWeights::columns(std::int64_t q0, std::int64_t q1) const {
  Columns columns;
  const std::int64_t keys = call_.keys();
  if (every_column_) {
    columns.runs.push_back({0, keys});
  } else {
    const BlockMask& mask = tiles_;
    std::vector<char> used(mask.k_tiles, 0);
    for (std::int64_t g = 0; g < mask.groups; ++g)
      for (std::int64_t qt = mask.q_tile_of(q0); qt < mask.q_tiles && mask.q_begin(qt) < q1; ++qt) {
        const std::int64_t row = mask.row(0, g, qt);
        for (std::int64_t e = mask.row_begin[row]; e < mask.row_begin[row + 1]; ++e) used[mask.tile[e]] = 1;
      }
    for (std::int64_t kt = 0; kt < mask.k_tiles; ++kt) {
      if (!used[kt]) continue;
      const std::int64_t begin = mask.key_start[kt], end = mask.key_start[kt + 1];
      if (!columns.runs.empty() && columns.runs.back().second == begin)
        columns.runs.back().second = end;
      else
        columns.runs.push_back({begin, end});
    }
  }
  std::vector<std::int64_t> index;
  for (const auto& [begin, end] : columns.runs)
    for (std::int64_t n = begin; n < end; ++n) index.push_back(n);
  columns.count = static_cast<std::int64_t>(index.size());
  columns.all = columns.count == keys;
  columns.index = torch::tensor(index, torch::kInt64);
  return columns;
}

at::Tensor BandWeights::scores(std::int64_t q0, std::int64_t q1, const Columns& columns) const {
  const double scale = 1.0 / std::sqrt(static_cast<double>(call_.q.size(3)));
  const at::Tensor q = call_.q[0].narrow(1, q0, q1 - q0).to(torch::kFloat);
  const at::Tensor k = columns.all ? call_.k[0] : call_.k[0].index_select(1, columns.index);
  at::Tensor s = torch::matmul(q * scale, k.to(torch::kFloat).transpose(1, 2));  // [H, r, c]
  const std::int64_t rows = q1 - q0, count = columns.count;
  if (rules_.has_relation()) {
    at::Tensor ids = torch::empty({rows, count}, torch::kInt32);
    std::int64_t offset = 0;
    for (const auto& [begin, end] : columns.runs) {
      rules_.relation_tile(0, q0, q1, begin, end, ids.data_ptr<std::int32_t>() + offset, count);
      offset += end - begin;
    }
    const at::Tensor table = call_.bias_table.to(torch::kFloat);  // [H, relations]
    const std::int64_t relations = table.size(1);
    // Id -1 (no relation) reads an extra zero column.
    const at::Tensor extended = torch::cat({table, torch::zeros({table.size(0), 1}, table.options())}, 1);
    const at::Tensor index = ids.to(torch::kInt64).masked_fill(ids.lt(0), relations).flatten();
    s = s + extended.index_select(1, index).view({table.size(0), rows, count});
  }
  if (call_.dense_bias.defined()) {
    const at::Tensor bias = call_.dense_bias[0].narrow(1, q0, rows).to(torch::kFloat);
    s = s + (columns.all ? bias : bias.index_select(2, columns.index));
  }
  return s;
}

at::Tensor BandWeights::visible_columns(std::int64_t q0, std::int64_t q1, const Columns& columns) const {
  const std::int64_t heads = call_.heads(), rows = q1 - q0, count = columns.count;
  if (rules_.spec().is_plain()) {
    // Causality and key padding only (the reference kernel's plain path).
    at::Tensor visible = torch::ones({rows, count}, torch::kBool);
    if (call_.causal) {
      const at::Tensor i = torch::arange(q0, q1, torch::kInt64).unsqueeze(1) + call_.query_offset;
      const at::Tensor j = columns.index.unsqueeze(0) - call_.prefix_len;
      visible = j.le(i);
    }
    if (call_.key_padding.defined()) {
      at::Tensor real = torch::ones({call_.keys()}, torch::kBool);
      real.narrow(0, call_.prefix_len, call_.keys() - call_.prefix_len).copy_(call_.key_padding[0].to(torch::kBool));
      visible = visible.logical_and(real.index_select(0, columns.index).unsqueeze(0));
    }
    return visible.unsqueeze(0).expand({heads, rows, count});
  }
  at::Tensor visible = torch::empty({heads, rows, count}, torch::kUInt8);
  for (std::int64_t h = 0; h < heads; ++h) {
    std::int64_t offset = 0;
    for (const auto& [begin, end] : columns.runs) {
      rules_.visible_tile(0, h, q0, q1, begin, end, visible[h].data_ptr<std::uint8_t>() + offset, count);
      offset += end - begin;
    }
  }
  return visible.to(torch::kBool);
}

at::Tensor BandWeights::widened(const at::Tensor& selected, const Columns& columns) const {
  if (columns.all) return selected;
  at::Tensor all = torch::zeros({selected.size(0), selected.size(1), call_.keys()}, selected.options());
  return all.index_copy_(2, columns.index, selected);
}

at::Tensor BandWeights::visible_rows(std::int64_t q0, std::int64_t q1) const {
  const Columns cols = columns(q0, q1);
  return widened(visible_columns(q0, q1, cols), cols);
}

// Seed 000 Eq. 2 over the whole call: impact[n] = Σ over voting queries of softmax weights,
// summed band by band.
void BandWeights::find_top_p_keys() const {
  const LayerSpec& spec = rules_.spec();
  const std::int64_t heads = call_.heads(), queries = call_.queries(), keys = call_.keys();
  const at::Tensor votes = query_votes(view_);  // [1, Lq] uint8 or undefined
  at::Tensor impact = torch::zeros({heads, keys}, torch::kDouble);
  constexpr std::int64_t kBand = 128;
  for (std::int64_t q0 = 0; q0 < queries; q0 += kBand) {
    const std::int64_t q1 = std::min(queries, q0 + kBand);
    const Columns cols = columns(q0, q1);
    at::Tensor a = masked_softmax(scores(q0, q1, cols), visible_columns(q0, q1, cols));
    if (votes.defined()) a = a * votes[0].narrow(0, q0, q1 - q0).to(torch::kFloat).view({1, -1, 1});
    impact += widened(a, cols).sum(1).to(torch::kDouble);
  }
  keep_.assign(heads, at::Tensor());
  for (std::int64_t h = 0; h < heads; ++h) {
    const HeadSpec& head = spec.head(h);
    if (head.fixed == FixedPattern::None && head.normaliser.kind == NormaliserKind::TopP)
      keep_[h] = top_p_keep_from_impact(impact[h].unsqueeze(0), head.normaliser.p)[0];
  }
  keep_found_ = true;
}

at::Tensor BandWeights::rows(std::int64_t q0, std::int64_t q1, at::Tensor* visible_out) const {
  if (q0 < 0 || q1 > call_.queries() || q0 > q1)
    throw Error("attention weights: queries [" + std::to_string(q0) + ", " + std::to_string(q1) + ") outside [0, " +
                std::to_string(call_.queries()) + ")");
  const Columns cols = columns(q0, q1);
  const at::Tensor s = scores(q0, q1, cols), visible = visible_columns(q0, q1, cols);
  if (visible_out) *visible_out = widened(visible, cols);
  const LayerSpec& spec = rules_.spec();
  std::vector<at::Tensor> heads;
  for (std::int64_t h = 0; h < call_.heads(); ++h) {
    const HeadSpec& head = spec.head(h);
    const at::Tensor seen = visible[h];
    if (head.fixed != FixedPattern::None) {
      heads.push_back(seen.to(torch::kFloat));  // one-hot on the fixed key
      continue;
    }
    switch (head.normaliser.kind) {
      case NormaliserKind::Softmax: heads.push_back(masked_softmax(s[h], seen)); break;
      case NormaliserKind::Gumbel: heads.push_back(masked_softmax(s[h] / head.normaliser.tau, seen)); break;
      case NormaliserKind::TopP:
        if (!keep_found_) find_top_p_keys();
        heads.push_back(masked_softmax(s[h], seen) * (cols.all ? keep_[h] : keep_[h].index_select(0, cols.index)).unsqueeze(0));
        break;
    }
  }
  return widened(torch::stack(heads, 0), cols);
}

}  // namespace strata::attn
