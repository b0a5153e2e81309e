#include "strata/nn/block_state_layer.h"

#include <torch/torch.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/nn/transformer_layers.h"

namespace strata::nn {

ContextStates context_states_from_name(const std::string& name) {
  if (name == "sh") return ContextStates::SH;
  if (name == "mh") return ContextStates::MH;
  if (name == "mf") return ContextStates::MF;
  throw Error("model.bst_context: unknown context states '" + name + "' (known: sh, mh, mf)");
}

namespace {

AdaptableLinear linear(std::int64_t in, std::int64_t out) {
  return AdaptableLinear(torch::nn::LinearOptions(in, out).bias(false));  // Meliad's maps are bias-free
}

// How many filters the SSM runs for each kind of context states.
std::int64_t ssm_outputs(const BlockStateOptions& o) {
  switch (o.context) {
    case ContextStates::SH: return 1;
    case ContextStates::MH: return o.heads;
    case ContextStates::MF: return o.filters;
  }
  return 1;
}

at::Tensor normal(at::IntArrayRef shape, double std) { return torch::randn(shape) * std; }

// [B, L, D] -> [B, H, L, D / H]
at::Tensor split_heads(const at::Tensor& x, std::int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

// A spec whose every head has `mask`.
attn::LayerSpec spec_of(attn::Mask mask) {
  attn::LayerSpec spec;
  spec.heads[0].mask = std::move(mask);
  return spec;
}

// SLIDE: each block attends to itself and the block before, causally, with T5's bucketed
// relative-position bias (the engine's t5_buckets: 32 buckets, of which causal attention uses
// the 16 backward ones, exact up to 8 tokens back and logarithmic up to 128).
attn::LayerSpec slide_spec(std::int64_t window) {
  attn::LayerSpec spec = spec_of(attn::Mask::blocks(window, 1));
  spec.bias.kind = attn::RelationKind::T5Buckets;
  return spec;
}

}  // namespace

BlockStateLayerImpl::BlockStateLayerImpl(const BlockStateOptions& options) : options_(options) {
  const std::int64_t d = options.d_model;
  if (options.heads <= 0 || d % options.heads != 0)
    throw Error("model.heads: " + std::to_string(options.heads) + " does not divide model.d_model " +
                std::to_string(d));
  if (options.window <= 0) throw Error("model.bst_window: must be positive, got " + std::to_string(options.window));
  q_proj = register_module("q_proj", linear(d, d));
  k_proj = register_module("k_proj", linear(d, d));
  v_proj = register_module("v_proj", linear(d, d));
  out_proj = register_module("out_proj", linear(options.block_state ? 2 * d : d, d));
  relation_bias = register_parameter(
      "relation_bias", torch::zeros({options.heads, attn::relation_count(slide_spec(options.window).bias)}));
  attention_norm = register_module("attention_norm", layer_norm(d));
  final_norm = register_module("final_norm", layer_norm(d));
  fc1 = register_module("fc1", linear(d, options.d_ff));
  fc2 = register_module("fc2", linear(options.d_ff, d));
  if (!options.block_state) return;

  StateSpaceOptions ssm_options = options.ssm;
  ssm_options.outputs = ssm_outputs(options);
  options_.ssm = ssm_options;
  const std::int64_t channels = ssm_options.channels;
  if (options.context == ContextStates::MF && options.filters <= 0)
    throw Error("model.bst_filters: must be positive, got " + std::to_string(options.filters));
  ssm_in = register_module("ssm_in", linear(d, channels));
  ssm = register_module("ssm", StateSpace(ssm_options));
  context_q = register_module("context_q", linear(d, d));
  const double lift_std = 1.0 / std::sqrt(static_cast<double>(channels));
  if (options.context == ContextStates::MF) {
    lift = register_parameter("lift", normal({channels, d}, lift_std));
    context_ids = register_parameter("context_ids", normal({options.filters, d}, 0.02));
    initial_context = register_parameter("initial_context", normal({options.filters, d}, 0.02));
    context_k = register_module("context_k", linear(d, d));
    context_v = register_module("context_v", linear(d, d));
  } else {
    const std::int64_t groups = ssm_options.outputs;
    key_lift = register_parameter("key_lift", normal({groups, channels, d / groups}, lift_std));
    value_lift = register_parameter("value_lift", normal({groups, channels, d / groups}, lift_std));
  }
}

at::Tensor BlockStateLayerImpl::forward(const at::Tensor& x) {
  if (x.dim() != 3 || x.size(2) != options_.d_model)
    throw Error("block-state layer: expected input [B, L, " + std::to_string(options_.d_model) + "]");
  const bool pre = options_.pre_norm;
  const double p = is_training() ? options_.dropout : 0.0;
  at::Tensor h = x + torch::dropout(attention(pre ? attention_norm(x) : x), p, is_training());
  if (!pre) h = attention_norm(h);
  const at::Tensor f = pre ? final_norm(h) : h;
  const at::Tensor inner = options_.activation == "gelu" ? torch::gelu(fc1(f)) : torch::relu(fc1(f));
  h = h + torch::dropout(fc2(inner), p, is_training());
  return pre ? h : final_norm(h);
}

at::Tensor BlockStateLayerImpl::attention(const at::Tensor& h) {
  const std::int64_t heads = options_.heads;
  const attn::LayerSpec slide = slide_spec(options_.window);
  attn::AttentionCall call;
  call.q = split_heads(q_proj(h), heads);
  call.k = split_heads(k_proj(h), heads);
  call.v = split_heads(v_proj(h), heads);
  call.causal = true;
  call.spec = &slide;
  call.bias_table = relation_bias;
  call.training = is_training();
  at::Tensor out = attn::attend(call, options_.kernel);  // [B, H, L, Dh]
  if (options_.block_state) out = torch::cat({out, cross_attention(h)}, 1);  // concatenated, not summed
  return out_proj(out.transpose(1, 2).reshape({h.size(0), h.size(1), -1}));
}

at::Tensor BlockStateLayerImpl::cross_attention(const at::Tensor& h) {
  const std::int64_t batch = h.size(0), length = h.size(1), d = options_.d_model, heads = options_.heads;
  const std::int64_t window = options_.window;
  // The SSM runs once over the whole sequence, before any blocking.
  const at::Tensor states = ssm(ssm_in(h).transpose(1, 2));  // [B, O, C, L]
  attn::AttentionCall call;
  call.q = split_heads(context_q(h), heads);
  call.training = is_training();
  attn::LayerSpec spec;
  attn::TokenLayout query_blocks, key_blocks;
  if (options_.context != ContextStates::MF) {
    // SH / MH: block k reads the states at its own positions, j <= i (y_j reads u_{<= j} only).
    call.k = split_heads(torch::einsum("bocl,oce->bloe", {states, key_lift}).reshape({batch, length, d}), heads);
    call.v = split_heads(torch::einsum("bocl,oce->bloe", {states, value_lift}).reshape({batch, length, d}), heads);
    call.causal = true;
    spec = spec_of(attn::Mask::blocks(window, 0));
  } else {
    // MF: block k reads the S filters' outputs at the last token of block k - 1; block 0 a
    // learned initial context. Every query of a block sees all S of them (no mask).
    const std::int64_t blocks = (length + window - 1) / window, filters = options_.filters;
    at::Tensor context = initial_context.unsqueeze(0).unsqueeze(0).expand({batch, 1, filters, d});
    if (blocks > 1) {
      const at::Tensor ends = torch::arange(1, blocks, torch::kLong) * window - 1;
      const at::Tensor read = states.index_select(3, ends);  // [B, S, C, blocks - 1]
      context = torch::cat({context, torch::einsum("bscn,cd->bnsd", {read, lift})}, 1);
    }
    context = (context + context_ids).reshape({batch, blocks * filters, d});
    call.k = split_heads(context_k(context), heads);
    call.v = split_heads(context_v(context), heads);
    query_blocks.segment = torch::div(torch::arange(length, torch::kInt), window, "floor").unsqueeze(0);
    key_blocks.segment = torch::div(torch::arange(blocks * filters, torch::kInt), filters, "floor").unsqueeze(0);
    call.query_layout = &query_blocks;
    call.key_layout = &key_blocks;
    spec = spec_of(attn::Mask::of(attn::MaskKind::SameSegment));
  }
  call.spec = &spec;
  return attn::attend(call, options_.kernel);
}

}  // namespace strata::nn
