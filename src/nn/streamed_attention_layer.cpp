#include "strata/nn/streamed_attention_layer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "strata/attn/attention_call.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/nn/linear_product.h"

namespace strata::nn {

namespace {

// [n, D] -> [1, H, n, D / H], contiguous.
at::Tensor split_row_heads(const at::Tensor& x, std::int64_t heads) {
  return x.view({1, x.size(0), heads, x.size(1) / heads}).permute({0, 2, 1, 3}).contiguous();
}

// [1, H, n, Dh] -> [n, H Dh]
at::Tensor merge_heads(const at::Tensor& x) {
  return x.permute({0, 2, 1, 3}).reshape({x.size(2), x.size(1) * x.size(3)});
}

// What every chunk of one step shares.
struct Step {
  const StreamedLayerWeights& w;
  const at::Tensor& ids;
  const OutputGradient& output_grad;
  std::int64_t length;
  double scale;
  StreamedStepResult result;

  at::Tensor embed(std::int64_t start, std::int64_t end) const {
    return at::embedding(w.embedding, ids.slice(0, start, end));
  }
  at::Tensor project(const at::Tensor& x, const at::Tensor& weight) const {
    return split_row_heads(linear_product(x, weight, {}), w.heads);
  }

  // Queries and keys of one chunk through the engine, then the output projection; returns
  // sum(Y * G) over the chunk's query rows [query_start, query_end) (with its graph).
  at::Tensor attend_rows(attn::AttentionCall& call, const at::Tensor& x_queries, std::int64_t query_start,
                         std::int64_t query_end) const {
    call.q = project(x_queries, w.wq);
    call.training = true;
    const at::Tensor y = linear_product(merge_heads(attn::attend(call, attn::Kernel::Fused)), w.wo, {});
    return (y * output_grad(query_start, query_end)).sum();
  }

  void backward(const at::Tensor& objective, std::int64_t rows) {
    if (objective.requires_grad()) objective.backward();
    ++result.chunks;
    result.largest_rows = std::max(result.largest_rows, rows);
  }
};

// The G global tokens' rows see every key. Their output and log-sum-exp come from a pass over
// all keys without a graph (an online softmax, as a flash-attention forward); their own share
// of the loss is then backpropagated through the output projection, which gives dO. The
// chunks add their keys' share of these rows' gradient (chunk_objective); dq collects in q's
// grad and reaches the parameters at the end (finish).
class GlobalRows {
 public:
  GlobalRows(Step& step, std::int64_t global, std::int64_t chunk) : step_(step), global_(global) {
    at::Tensor o;
    {
      at::NoGradGuard no_grad;
      const at::Tensor x = step.embed(0, global);
      q_ = step.project(x, step.w.wq);
      at::Tensor running_max;
      at::Tensor sum;
      for (std::int64_t start = 0; start < step.length; start += chunk) {
        const at::Tensor keys = step.embed(start, std::min(step.length, start + chunk));
        const at::Tensor scores = at::matmul(q_, step.project(keys, step.w.wk).transpose(-2, -1)) * step.scale;
        const at::Tensor tile_max = std::get<0>(scores.max(-1, true));
        const at::Tensor new_max = running_max.defined() ? at::maximum(running_max, tile_max) : tile_max;
        const at::Tensor p = at::exp(scores - new_max);
        const at::Tensor pv = at::matmul(p, step.project(keys, step.w.wv));
        if (running_max.defined()) {
          const at::Tensor rescale = at::exp(running_max - new_max);
          sum = sum * rescale + p.sum(-1, true);
          o = o * rescale + pv;
        } else {
          sum = p.sum(-1, true);
          o = pv;
        }
        running_max = new_max;
      }
      o = o / sum;
      lse_ = running_max + at::log(sum);
    }
    const at::Tensor o_leaf = o.requires_grad_(true);
    const at::Tensor own = (linear_product(merge_heads(o_leaf), step.w.wo, {}) * step.output_grad(0, global)).sum();
    step.result.loss += own.item<double>();
    own.backward();
    d_out_ = o_leaf.grad();
    d_sum_ = (d_out_ * o.detach()).sum(-1, true);
    q_.requires_grad_(true);
  }

  // A surrogate whose gradient with respect to k and v (and q_) is the global rows' gradient
  // through these keys: with P = exp(S - lse) and lse held fixed, dF/dS = P (dO V^T - D),
  // dF/dV = P^T dO, which is attention's backward for this tile of keys.
  at::Tensor chunk_objective(const at::Tensor& k, const at::Tensor& v) const {
    const at::Tensor p = at::exp(at::matmul(q_, k.transpose(-2, -1)) * step_.scale - lse_);
    return (p * (at::matmul(d_out_, v.transpose(-2, -1)) - d_sum_)).sum();
  }

  // dq, collected over the chunks, through q's projection and embedding.
  void finish() {
    step_.project(step_.embed(0, global_), step_.w.wq).backward(q_.grad());
  }

 private:
  Step& step_;
  std::int64_t global_;
  at::Tensor q_, lse_, d_out_, d_sum_;
};

// window(W, W) | global(G): chunk c's queries are [max(s, G), e) for s = c x chunk; they read
// keys [max(G, s - W), min(L, e + W)) and the global tokens as prefix slots (visible to every
// query), so no key is read twice and query_offset places the window.
void window_global_step(Step& step, std::int64_t window, std::int64_t global, std::int64_t chunk) {
  std::unique_ptr<GlobalRows> global_rows;
  if (global > 0) global_rows = std::make_unique<GlobalRows>(step, global, chunk);
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::window(window, window);
  for (std::int64_t start = 0; start < step.length; start += chunk) {
    const std::int64_t end = std::min(step.length, start + chunk);
    const std::int64_t query_start = std::max(start, global);
    const std::int64_t key_start = std::max(global, query_start - window);
    const std::int64_t key_end = std::min(step.length, end + window);
    const at::Tensor x_keys = step.embed(key_start, key_end);
    attn::AttentionCall call;
    call.spec = &spec;
    call.k = step.project(x_keys, step.w.wk);
    call.v = step.project(x_keys, step.w.wv);
    if (global > 0) {
      const at::Tensor x_global = step.embed(0, global);
      call.k = at::cat({step.project(x_global, step.w.wk), call.k}, 2);
      call.v = at::cat({step.project(x_global, step.w.wv), call.v}, 2);
      call.prefix_len = global;
    }
    call.query_offset = query_start - key_start;
    at::Tensor objective = at::zeros({}, at::kFloat);
    if (query_start < end) {
      objective = step.attend_rows(call, x_keys.slice(0, query_start - key_start, end - key_start), query_start, end);
      step.result.loss += objective.item<double>();
    }
    // The global rows' gradient through this chunk's own tokens' keys [start, end): in the
    // key tensor (prefix slots then keys proper) they sit at [G + start - key_start, G + end
    // - key_start), the prefix slots themselves for the first chunk.
    if (global_rows) {
      const std::int64_t from = global + start - key_start, to = global + end - key_start;
      objective = objective + global_rows->chunk_objective(call.k.slice(2, from, to), call.v.slice(2, from, to));
    }
    step.backward(objective, key_end - key_start + global);
  }
  if (global_rows) global_rows->finish();
}

// same_section: whole sections, grouped up to `chunk` tokens.
void same_section_step(Step& step, const at::Tensor& section, std::int64_t chunk) {
  const at::Tensor ids = section.contiguous();
  const std::int32_t* s = ids.data_ptr<std::int32_t>();
  // Chunks of whole sections see what the whole sequence would only if a section's tokens are
  // contiguous.
  for (std::int64_t i = 1; i < step.length; ++i)
    if (s[i] < s[i - 1])
      throw Error(fmt::format("streamed attention: section ids must not decrease (section {} at token {} after "
                              "section {})", s[i], i, s[i - 1]));
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::Mask::of(attn::MaskKind::SameSection);
  std::int64_t start = 0;
  while (start < step.length) {
    // Whole sections while they fit; at least one.
    std::int64_t end = start;
    while (end < step.length) {
      std::int64_t section_end = end + 1;
      while (section_end < step.length && s[section_end] == s[end]) ++section_end;
      if (end > start && section_end - start > chunk) break;
      end = section_end;
    }
    const at::Tensor x = step.embed(start, end);
    attn::TokenLayout layout;
    layout.section = ids.slice(0, start, end).unsqueeze(0);
    attn::AttentionCall call;
    call.spec = &spec;
    call.query_layout = call.key_layout = &layout;
    call.k = step.project(x, step.w.wk);
    call.v = step.project(x, step.w.wv);
    const at::Tensor objective = step.attend_rows(call, x, start, end);
    step.result.loss += objective.item<double>();
    step.backward(objective, end - start);
    start = end;
  }
}

}  // namespace

StreamedStepResult streamed_attention_step(const StreamedLayerWeights& weights, const at::Tensor& ids,
                                           const StreamedStructure& structure, const OutputGradient& output_grad,
                                           std::int64_t chunk) {
  if (ids.dim() != 1 || ids.scalar_type() != at::kLong)
    throw Error("streamed attention: token ids must be one int64 vector [L]");
  const std::int64_t model = weights.embedding.size(1);
  if (weights.heads <= 0 || model % weights.heads != 0)
    throw Error(fmt::format("streamed attention: width {} is not a multiple of {} heads", model, weights.heads));
  if (chunk <= structure.global)
    throw Error(fmt::format("streamed attention: chunk {} must exceed the {} global tokens", chunk, structure.global));
  if (structure.window < 0 || structure.global < 0 || structure.global >= ids.size(0))
    throw Error(fmt::format("streamed attention: window {} and global {} must not be negative, and the global tokens "
                            "fewer than the {} tokens", structure.window, structure.global, ids.size(0)));
  Step step{weights, ids, output_grad, ids.size(0), 1.0 / std::sqrt(static_cast<double>(model / weights.heads)), {}};
  if (structure.section.defined()) {
    if (structure.section.dim() != 1 || structure.section.size(0) != step.length ||
        structure.section.scalar_type() != at::kInt)
      throw Error(fmt::format("streamed attention: sections must be one int32 id per token ({})", step.length));
    same_section_step(step, structure.section, chunk);
  } else {
    window_global_step(step, structure.window, structure.global, chunk);
  }
  return step.result;
}

}  // namespace strata::nn
