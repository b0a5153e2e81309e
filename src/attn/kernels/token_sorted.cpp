#include "token_sorted.h"

#include <torch/torch.h>

#include <vector>

#include "fused.h"

namespace strata::attn {

namespace {

bool is_matching_head(const HeadSpec& head) {
  return head.fixed == FixedPattern::None && head.normaliser.kind == NormaliserKind::Softmax &&
         head.mask.kind == MaskKind::MatchingToken;
}

// [B, L] int64: for each item, positions ordered by (seen more than once, token id, position).
at::Tensor token_order(const TokenLayout& layout, std::int64_t batch) {
  const at::Tensor token = layout.token.to(torch::kLong).expand({batch, -1});
  const at::Tensor repeated = layout.repeated.to(torch::kLong).expand({batch, -1});
  const std::int64_t length = token.size(1);
  const at::Tensor position = torch::arange(length, torch::kLong).expand({batch, -1});
  // One sortable key per token: ids are below 2^31 and positions below 2^20 in practice;
  // the key keeps all three in order without a stable multi-key sort.
  const at::Tensor key = repeated * (std::int64_t{1} << 52) + (token + 1) * (std::int64_t{1} << 20) + position;
  return std::get<1>(key.sort(1));
}

// Per-token field [B or 1, L] reordered by `order` [B, L].
at::Tensor reorder_field(const at::Tensor& field, const at::Tensor& order) {
  if (!field.defined()) return field;
  return field.expand({order.size(0), -1}).gather(1, order);
}

TokenLayout reorder_layout(const TokenLayout& layout, const at::Tensor& order) {
  TokenLayout out = layout;  // the tree fields index sections, not tokens: unchanged
  for (at::Tensor TokenLayout::*field : {&TokenLayout::section, &TokenLayout::paragraph, &TokenLayout::sentence,
                                         &TokenLayout::segment, &TokenLayout::document, &TokenLayout::token,
                                         &TokenLayout::repeated})
    out.*field = reorder_field(layout.*field, order);
  return out;
}

// [B, H, L, Dh] rows reordered along L by `order` [B, L].
at::Tensor reorder_rows(const at::Tensor& x, const at::Tensor& order) {
  return x.gather(2, order.view({order.size(0), 1, order.size(1), 1}).expand_as(x));
}

LayerSpec heads_of(const LayerSpec& spec, const std::vector<std::int64_t>& heads) {
  LayerSpec out;
  out.heads.clear();
  for (std::int64_t h : heads) out.heads.push_back(spec.head(h));
  return out;
}

}  // namespace

bool token_sorting_applies(const AttentionCall& call) {
  if (call.spec == nullptr || call.causal || call.prefix_len != 0 || call.bias_table.defined() ||
      call.dense_bias.defined() || call.spec->bias.kind != RelationKind::None || call.spec->dense_bias ||
      (call.training && call.dropout > 0) || call.query_layout == nullptr || call.query_layout != call.key_layout ||
      call.block_mask != nullptr || call.q.size(2) != call.k.size(2) || !call.query_layout->token.defined() ||
      !call.query_layout->repeated.defined())
    return false;
  bool any = false;
  for (std::int64_t h = 0; h < call.q.size(1); ++h) {
    const HeadSpec& head = call.spec->head(h);
    // Gumbel noise is keyed by the head's index, which the split into two calls renumbers.
    if (call.training && head.fixed == FixedPattern::None && head.normaliser.kind == NormaliserKind::Gumbel) return false;
    any = any || is_matching_head(head);
  }
  return any;
}

TokenLayout token_ordered_layout(const TokenLayout& layout) {
  return reorder_layout(layout, token_order(layout, layout.token.size(0)));
}

at::Tensor attend_token_sorted(const AttentionCall& call) {
  const std::int64_t heads = call.q.size(1), batch = call.q.size(0);
  std::vector<std::int64_t> matching, others;
  for (std::int64_t h = 0; h < heads; ++h) (is_matching_head(call.spec->head(h)) ? matching : others).push_back(h);

  const at::Tensor order = token_order(*call.query_layout, batch);
  const TokenLayout sorted_layout = reorder_layout(*call.query_layout, order);
  const at::Tensor pick = torch::tensor(matching, torch::kLong);
  const LayerSpec sorted_spec = heads_of(*call.spec, matching);
  AttentionCall sorted = call;
  sorted.spec = &sorted_spec;
  sorted.q = reorder_rows(call.q.index_select(1, pick), order);
  sorted.k = reorder_rows(call.k.index_select(1, pick), order);
  sorted.v = reorder_rows(call.v.index_select(1, pick), order);
  if (call.key_padding.defined()) sorted.key_padding = call.key_padding.expand({batch, -1}).gather(1, order);
  sorted.query_padding = reorder_field(call.query_padding, order);
  sorted.query_layout = &sorted_layout;
  sorted.key_layout = &sorted_layout;
  const at::Tensor back = std::get<1>(order.sort(1));  // the inverse permutation
  const at::Tensor matching_out = reorder_rows(fused_attention(sorted), back);
  if (others.empty()) return matching_out;

  const LayerSpec other_spec = heads_of(*call.spec, others);
  AttentionCall rest = call;
  rest.spec = &other_spec;
  const at::Tensor rest_pick = torch::tensor(others, torch::kLong);
  rest.q = call.q.index_select(1, rest_pick);
  rest.k = call.k.index_select(1, rest_pick);
  rest.v = call.v.index_select(1, rest_pick);
  // Heads back in their order: position of head h in cat(matching, others).
  std::vector<std::int64_t> where(static_cast<std::size_t>(heads));
  for (std::size_t i = 0; i < matching.size(); ++i) where[matching[i]] = static_cast<std::int64_t>(i);
  for (std::size_t i = 0; i < others.size(); ++i) where[others[i]] = static_cast<std::int64_t>(matching.size() + i);
  return torch::cat({matching_out, fused_attention(rest)}, 1).index_select(1, torch::tensor(where, torch::kLong));
}

}  // namespace strata::attn
