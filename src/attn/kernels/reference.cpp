#include "reference.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace strata::attn {

at::Tensor dense_visibility(const AttentionCall& call) {
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
    const auto keys = call.key_padding.to(torch::kBool).view({-1, 1, 1, lk});
    visible = visible.defined() ? visible.logical_and(keys) : keys.expand({-1, 1, lq, lk});
  }
  if (!visible.defined()) return visible;
  if (call.prefix_len > 0) {
    const auto prefix = torch::ones({visible.size(0), 1, lq, call.prefix_len}, bool_options);
    visible = torch::cat({prefix, visible.expand({-1, 1, lq, lk})}, 3);
  }
  return visible;
}

at::Tensor reference_attention(const AttentionCall& call) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(call.q.size(3)));
  at::Tensor scores = torch::matmul(call.q * scale, call.k.transpose(2, 3));
  const at::Tensor visible = dense_visibility(call);
  at::Tensor probs;
  if (!visible.defined()) {
    probs = torch::softmax(scores, -1);
  } else {
    scores = scores.masked_fill(visible.logical_not(), -std::numeric_limits<float>::infinity());
    const at::Tensor row_sees_any = visible.any(-1, /*keepdim=*/true);
    if (row_sees_any.all().item<bool>()) {
      probs = torch::softmax(scores, -1);
    } else {
      // A row that sees no key would be softmax(all -inf) = NaN: give it zeros instead,
      // through finite scores so that backward stays finite too.
      scores = scores.masked_fill(row_sees_any.logical_not(), 0.0);
      probs = torch::softmax(scores, -1) * row_sees_any;
    }
  }
  if (call.training && call.dropout > 0) probs = torch::dropout(probs, call.dropout, true);
  return torch::matmul(probs, call.v);
}

}  // namespace strata::attn
