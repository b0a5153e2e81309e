#include "strata/nn/multi_head_attention.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "strata/attn/kept_call.h"
#include "strata/core/error.h"

namespace strata::nn {

MultiHeadAttentionImpl::MultiHeadAttentionImpl(const AttentionOptions& options)
    : options_(options) {
  if (options.heads <= 0 || options.d_model % options.heads != 0)
    throw Error("attention: d_model " + std::to_string(options.d_model) +
                " is not divisible by heads " + std::to_string(options.heads));
  const auto linear = torch::nn::LinearOptions(options.d_model, options.d_model).bias(options.bias);
  q_proj = register_module("q_proj", AdaptableLinear(linear));
  k_proj = register_module("k_proj", AdaptableLinear(linear));
  v_proj = register_module("v_proj", AdaptableLinear(linear));
  out_proj = register_module("out_proj", AdaptableLinear(linear));
  if (options.global_projections) {
    query_global = register_module("query_global", AdaptableLinear(linear));
    key_global = register_module("key_global", AdaptableLinear(linear));
    value_global = register_module("value_global", AdaptableLinear(linear));
  }
  attn::validate(options.spec);
  if (const std::int64_t relations = attn::relation_count(options.spec.bias); relations > 0) {
    const at::Tensor& shared = options.shared_relation_bias;
    if (!shared.defined()) {
      relation_bias = register_parameter("relation_bias", torch::zeros({options.heads, relations}));
    } else if (shared.sizes() != at::IntArrayRef{options.heads, relations}) {
      throw Error("attention: the shared relation bias table has the wrong shape for this layer's spec");
    } else {
      relation_bias = shared;
    }
  }
}

at::Tensor MultiHeadAttentionImpl::split_heads(const at::Tensor& x) const {
  return x.view({x.size(0), x.size(1), options_.heads, -1}).transpose(1, 2);
}

at::Tensor MultiHeadAttentionImpl::queries(AdaptableLinear& projection, const at::Tensor& x) {
  const at::Tensor q = split_heads(projection(x));
  // The engine scales by 1 / sqrt(Dh); an unscaled model (T5) undoes it on the queries.
  return options_.scale ? q : q * std::sqrt(static_cast<double>(q.size(-1)));
}

at::Tensor MultiHeadAttentionImpl::self_attention(const at::Tensor& x, const at::Tensor& key_padding,
                                                  bool causal, LayerKvCache* cache,
                                                  const AttentionExtras& extras) {
  at::Tensor k = split_heads(k_proj(x));
  at::Tensor v = split_heads(v_proj(x));
  std::int64_t query_offset = 0;
  if (cache) {
    if (cache->self_k.defined()) query_offset = cache->self_k.size(2);
    k = cache->self_k = append_positions(cache->self_k_buffer, cache->self_k, k);
    v = cache->self_v = append_positions(cache->self_v_buffer, cache->self_v, v);
  }
  if (key_padding.defined() && key_padding.size(1) != k.size(2))
    throw Error("attention: the key padding covers " + std::to_string(key_padding.size(1)) + " positions, the keys " +
                std::to_string(k.size(2)) + " (with a cache: the cached ones and this call's)");
  // The queries are the last of the keys proper: their padding is the keys'.
  const at::Tensor query_padding = key_padding.defined() ? key_padding.narrow(1, query_offset, x.size(1)) : key_padding;
  at::Tensor heads = attend(x, k, v, key_padding, query_padding, causal, query_offset,
                            extras.query_layout ? extras.query_layout : extras.layout, extras);
  if (query_global) {
    if (cache) throw Error("attention: global projections (Longformer) run without a key/value cache");
    heads = with_global_rows(x, heads, key_padding, std::min(attn::global_tokens(options_.spec), x.size(1)));
    // Longformer's padded tokens attend to nothing: their attention output is zero.
    if (key_padding.defined()) heads = heads.masked_fill(key_padding.logical_not().view({x.size(0), 1, -1, 1}), 0.0);
  }
  return project_out(heads, x);
}

at::Tensor MultiHeadAttentionImpl::with_global_rows(const at::Tensor& x, const at::Tensor& heads,
                                                    const at::Tensor& key_padding, std::int64_t count) {
  if (count == 0) return heads;
  attn::AttentionCall call;
  call.q = queries(query_global, x.narrow(1, 0, count));
  call.k = split_heads(key_global(x));
  call.v = split_heads(value_global(x));
  call.key_padding = key_padding;
  call.dropout = options_.dropout;
  call.training = is_training();
  const at::Tensor global = attn::attend(call, attn::Kernel::Reference);  // [B, H, count, Dh]
  return torch::cat({global, heads.narrow(2, count, heads.size(2) - count)}, 2);
}

at::Tensor MultiHeadAttentionImpl::project_out(const at::Tensor& heads, const at::Tensor& x) {
  const at::Tensor gated = head_gate_.defined() ? heads * head_gate_.view({1, -1, 1, 1}) : heads;
  return out_proj(gated.transpose(1, 2).reshape({x.size(0), x.size(1), options_.d_model}));
}

at::Tensor MultiHeadAttentionImpl::cross_attention(const at::Tensor& x, const at::Tensor& memory,
                                                   const at::Tensor& memory_padding,
                                                   LayerKvCache* cache,
                                                   const AttentionExtras& extras) {
  at::Tensor k, v;
  if (cache && cache->cross_k.defined()) {
    k = cache->cross_k;
    v = cache->cross_v;
  } else {
    k = split_heads(k_proj(memory));
    v = split_heads(v_proj(memory));
    if (cache) {
      // Contiguous once here: a cached transposed view would be copied by every later step's
      // matmul (a third of a cached decoding step at batch 4). Without a cache the fused
      // kernel reads the view as it is, and its gradient reaches the projection uncopied.
      k = k.contiguous();
      v = v.contiguous();
      cache->cross_k = k;
      cache->cross_v = v;
    }
  }
  return project_out(attend(x, k, v, memory_padding, extras.query_padding, /*causal=*/false, 0, nullptr, extras), x);
}

at::Tensor MultiHeadAttentionImpl::attend(const at::Tensor& x, at::Tensor k, at::Tensor v,
                                          const at::Tensor& key_padding,
                                          const at::Tensor& query_padding, bool causal,
                                          std::int64_t query_offset,
                                          const attn::TokenLayout* query_layout,
                                          const AttentionExtras& extras) {
  attn::AttentionCall call;
  call.q = queries(q_proj, x);
  if (const PrefixKv* prefix = extras.prefix) {
    const std::int64_t batch = x.size(0);
    k = torch::cat({prefix->k.expand({batch, -1, -1, -1}), k}, 2);
    v = torch::cat({prefix->v.expand({batch, -1, -1, -1}), v}, 2);
    call.prefix_len = prefix->k.size(2);
    call.prefix_segment = prefix->segment;
  }
  call.k = k;
  call.v = v;
  call.key_padding = key_padding;
  call.query_padding = query_padding;
  call.causal = causal;
  call.query_offset = query_offset;
  call.dropout = options_.dropout;
  call.training = is_training();
  // Dropout and Gumbel noise come from a counter keyed by this seed; drawing it from the
  // global generator keeps training reproducible (the trainer reseeds that every step).
  if (call.training) {
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    call.seed = generator.get<at::CPUGeneratorImpl>()->random64();
  }
  // The call's spec: the layer's, with the dense bias switched on when one is given.
  attn::LayerSpec spec = options_.spec;
  spec.dense_bias = extras.bias.defined();
  if (!spec.is_plain()) {
    call.spec = &spec;
    call.query_layout = query_layout;
    call.key_layout = extras.layout;
    call.bias_table = relation_bias;
    call.dense_bias = extras.bias;
  }
  if (keep_) kept_ = std::make_shared<const attn::KeptCall>(attn::KeptCall::of(call));
  at::Tensor heads;  // [B, H, Lq, Dh]
  if (extras.weights || record_) {
    at::Tensor weights;
    heads = attn::attend_keeping_weights(call, weights);
    if (record_) {
      recorded_ = weights.detach();
      recorded_prefix_ = call.prefix_len;
    }
    if (extras.weights) *extras.weights = weights.narrow(-1, call.prefix_len, weights.size(-1) - call.prefix_len);
  } else {
    heads = attn::attend(call, options_.kernel);
  }
  return heads;
}

}  // namespace strata::nn
