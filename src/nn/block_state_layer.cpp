#include "strata/nn/block_state_layer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/error.h"
#include "strata/nn/recompute.h"
#include "strata/nn/transformer_layers.h"
#include "strata/nn/dropout.h"

namespace strata::nn {

ContextStates context_states_from_name(const std::string& name) {
  if (name == "sh") return ContextStates::SH;
  if (name == "mh") return ContextStates::MH;
  if (name == "mf") return ContextStates::MF;
  if (name == "recurrent") return ContextStates::Recurrent;
  throw Error("model.bst_context: unknown context states '" + name + "' (known: sh, mh, mf, recurrent)");
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
    case ContextStates::Recurrent: return 0;
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

// Block ids for an attention from each block's queries (positions offset .. offset + length - 1,
// counted from block `first`) to `per_block` keys a block, in block order from `first`: with
// the mask same_segment, each block reads its own keys only.
void same_block_layouts(std::int64_t offset, std::int64_t length, std::int64_t window, std::int64_t first,
                        std::int64_t keys, std::int64_t per_block, attn::TokenLayout& queries,
                        attn::TokenLayout& key_layout) {
  queries.segment = (torch::div(torch::arange(offset, offset + length, torch::kInt), window, "floor") - first).unsqueeze(0);
  key_layout.segment = torch::div(torch::arange(keys, torch::kInt), per_block, "floor").unsqueeze(0);
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
  if (options.filters <= 0 && (options.context == ContextStates::MF || options.context == ContextStates::Recurrent))
    throw Error("model.bst_filters: must be positive, got " + std::to_string(options.filters));
  context_q = register_module("context_q", linear(d, d));
  if (options.context == ContextStates::Recurrent) {
    // Meliad's initialisations: the state small, its slot positions at unit scale (they are
    // added after the norm), the gate's bias near 0 (g near 1/2).
    initial_context = register_parameter("initial_context", normal({options.filters, d}, 0.1));
    state_positions = register_parameter("state_positions", normal({options.filters, d}, 1.0));
    gate_bias = register_parameter("gate_bias", normal({d}, 0.1));
    state_norm = register_module("state_norm", layer_norm(d));
    state_q = register_module("state_q", linear(d, d));
    state_q2 = register_module("state_q2", linear(d, d));
    state_k = register_module("state_k", linear(d, d));
    state_v = register_module("state_v", linear(d, d));
    state_out = register_module("state_out", torch::nn::Linear(2 * d, d));
    return;
  }

  StateSpaceOptions ssm_options = options.ssm;
  ssm_options.outputs = ssm_outputs(options);
  options_.ssm = ssm_options;
  const std::int64_t channels = ssm_options.channels;
  ssm_in = register_module("ssm_in", linear(d, channels));
  ssm = register_module("ssm", StateSpace(ssm_options));
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

void BlockStateLayerImpl::check_input(const at::Tensor& x) const {
  if (x.dim() != 3 || x.size(2) != options_.d_model)
    throw Error("block-state layer: expected input [B, L, " + std::to_string(options_.d_model) + "]");
}

at::Tensor BlockStateLayerImpl::forward(const at::Tensor& x, LayerKvCache* cache, std::int64_t offset) {
  check_input(x);
  if (offset != 0 && cache == nullptr) throw Error("block-state layer: an offset needs the cache of the positions before it");
  return forward_part(x, cache, offset, at::Tensor());
}

at::Tensor BlockStateLayerImpl::forward_part(const at::Tensor& x, LayerKvCache* cache, std::int64_t offset,
                                             const at::Tensor& states) {
  const bool pre = options_.pre_norm;
  const double p = is_training() ? options_.dropout : 0.0;
  at::Tensor h = x + nn::dropout(attention(pre ? attention_norm(x) : x, cache, offset, states), p, is_training());
  if (!pre) h = attention_norm(h);
  const at::Tensor f = pre ? final_norm(h) : h;
  const at::Tensor inner = options_.activation == "gelu" ? torch::gelu(fc1(f)) : torch::relu(fc1(f));
  h = h + nn::dropout(fc2(inner), p, is_training());
  return pre ? h : final_norm(h);
}

at::Tensor BlockStateLayerImpl::forward_recomputed(const at::Tensor& x, std::int64_t span) {
  check_input(x);
  const bool reads_across_spans = options_.block_state && (options_.context == ContextStates::MF ||
                                                           options_.context == ContextStates::Recurrent);
  if (!options_.pre_norm || options_.xl_memory || reads_across_spans)
    throw Error("block-state layer: recomputation by span runs pre-norm SLIDE, SH and MH layers (MF, recurrent and "
                "XL layers are not split)");
  const std::int64_t window = options_.window, length = x.size(1);
  if (span <= 0 || span % window != 0)
    throw Error("block-state layer: the recomputed span must be a positive multiple of W = " + std::to_string(window) +
                ", got " + std::to_string(span));
  const std::vector<at::Tensor> params = parameters();
  std::vector<SpanInput> inputs{{x, 1, window}};  // a span's queries read the block before it
  if (options_.block_state) {
    // The SSM's input span by span, then the SSM once over the whole sequence (its FFTs read
    // every position); only u [B, L, C] and the states [B, O, C, L] are kept.
    const auto input = [this](const std::vector<at::Tensor>& in, std::int64_t, std::int64_t) {
      return ssm_in(attention_norm(in[0]));
    };
    const at::Tensor u = recompute_by_span(input, {{x, 1}}, length, span, 1, params);
    const auto run_ssm = [this](const std::vector<at::Tensor>& in, std::int64_t, std::int64_t) {
      return ssm(in[0].transpose(1, 2));
    };
    inputs.push_back({recompute_by_span(run_ssm, {{u}}, length, length, 3, params), 3});
  }
  const auto part = [this, window](const std::vector<at::Tensor>& in, std::int64_t start, std::int64_t end) {
    const std::int64_t before = std::min(start, window);
    LayerKvCache previous;  // the block before the span, as decoding would have cached it
    if (before > 0) {
      const at::Tensor h = attention_norm(in[0].narrow(1, 0, before));
      previous.self_k = split_heads(k_proj(h), options_.heads);
      previous.self_v = split_heads(v_proj(h), options_.heads);
    }
    const at::Tensor states = in.size() > 1 ? in[1] : at::Tensor();
    return forward_part(in[0].narrow(1, before, end - start), &previous, start, states);
  };
  return recompute_by_span(part, std::move(inputs), length, span, 1, params);
}

namespace {

// Decoding: the keys and values cached for the positions before `offset` are put in front of
// the new ones (k, v: [B, H, T, Dh]), and the call's query offset set to match. Kept for the
// next call: the keys from the start of the block `blocks_before` blocks before the next
// position's block. Both ends are block boundaries, so the engine's blocks(W, n) mask and
// relative positions read the same pairs as over the whole sequence.
void join_cached_keys(at::Tensor& cached_k, at::Tensor& cached_v, at::Tensor& k, at::Tensor& v, std::int64_t offset,
                      std::int64_t window, std::int64_t blocks_before, attn::AttentionCall& call) {
  const std::int64_t end = offset + k.size(2);
  if (cached_k.defined()) {
    k = torch::cat({cached_k, k}, 2);
    v = torch::cat({cached_v, v}, 2);
  }
  const std::int64_t start = end - k.size(2);  // the first key's position
  call.query_offset = offset - start;
  const std::int64_t keep = std::max<std::int64_t>(0, (end / window - blocks_before) * window);
  cached_k = k.narrow(2, keep - start, end - keep).contiguous();
  cached_v = v.narrow(2, keep - start, end - keep).contiguous();
}

// [B, H, L, Dh] -> [B * nb, H, W, Dh]: one row per block, zero-padded to nb = ceil(L / W) blocks.
at::Tensor to_blocks(const at::Tensor& x, std::int64_t window) {
  const std::int64_t length = x.size(2), blocks = (length + window - 1) / window;
  const at::Tensor padded = torch::constant_pad_nd(x, {0, 0, 0, blocks * window - length});
  return padded.view({x.size(0), x.size(1), blocks, window, x.size(3)})
      .transpose(1, 2)
      .reshape({x.size(0) * blocks, x.size(1), window, x.size(3)});
}

// Each block's predecessor, in the same rows: zeros before block 0.
at::Tensor previous_blocks(const at::Tensor& blocks, std::int64_t batch) {
  const at::Tensor per_sequence = blocks.view({batch, -1, blocks.size(1), blocks.size(2), blocks.size(3)});
  const std::int64_t count = per_sequence.size(1);
  return torch::constant_pad_nd(per_sequence.narrow(1, 0, count - 1), {0, 0, 0, 0, 0, 0, 1, 0}).view_as(blocks);
}

}  // namespace

at::Tensor BlockStateLayerImpl::xl_attention(const at::Tensor& h) {
  // Blocks become batch rows: each block's W queries read [block b - 1 (cache); block b],
  // causally with the queries W positions on (the same pairs and relative positions as
  // SLIDE's mask), block 0's missing predecessor padded out.
  const std::int64_t batch = h.size(0), length = h.size(1), heads = options_.heads, window = options_.window;
  const std::int64_t blocks = (length + window - 1) / window;
  const at::Tensor cached = h.detach();
  attn::AttentionCall call;
  call.q = to_blocks(split_heads(q_proj(h), heads), window);
  call.k = torch::cat({previous_blocks(to_blocks(split_heads(k_proj(cached), heads), window), batch),
                       to_blocks(split_heads(k_proj(h), heads), window)}, 2);
  call.v = torch::cat({previous_blocks(to_blocks(split_heads(v_proj(cached), heads), window), batch),
                       to_blocks(split_heads(v_proj(h), heads), window)}, 2);
  const at::Tensor has_previous = (torch::arange(blocks) > 0).unsqueeze(1).expand({blocks, window});
  const at::Tensor is_token = torch::arange(blocks * window).view({blocks, window}) < length;
  call.key_padding = torch::cat({has_previous, is_token}, 1).repeat({batch, 1});
  call.causal = true;
  call.query_offset = window;
  attn::LayerSpec spec = spec_of(attn::Mask::all());
  spec.bias = slide_spec(window).bias;
  call.spec = &spec;
  call.bias_table = relation_bias;
  call.training = is_training();
  const at::Tensor out = attn::attend(call, options_.kernel);  // [B * nb, H, W, Dh]
  return out.view({batch, blocks, heads, window, -1}).transpose(1, 2).reshape({batch, heads, blocks * window, -1})
      .narrow(2, 0, length);
}

at::Tensor BlockStateLayerImpl::attention(const at::Tensor& h, LayerKvCache* cache, std::int64_t offset,
                                          const at::Tensor& states) {
  const std::int64_t heads = options_.heads;
  const bool recurrent = options_.block_state && options_.context == ContextStates::Recurrent;
  if (recurrent && cache != nullptr)
    throw Error("bst_lm: a Block-Recurrent layer does not decode with a cache (generate with --no-cache)");
  at::Tensor out, k, v;  // [B, H, T, Dh]
  if (options_.xl_memory && at::GradMode::is_enabled() && cache == nullptr) {
    out = xl_attention(h);  // without gradients the XL cache is SLIDE
    if (recurrent) {
      k = split_heads(k_proj(h), heads);
      v = split_heads(v_proj(h), heads);
    }
  } else {
    const attn::LayerSpec slide = slide_spec(options_.window);
    attn::AttentionCall call;
    call.q = split_heads(q_proj(h), heads);
    k = split_heads(k_proj(h), heads);
    v = split_heads(v_proj(h), heads);
    if (cache) join_cached_keys(cache->self_k, cache->self_v, k, v, offset, options_.window, 1, call);
    call.k = k;
    call.v = v;
    call.causal = true;
    call.spec = &slide;
    call.bias_table = relation_bias;
    call.training = is_training();
    out = attn::attend(call, options_.kernel);
  }
  if (options_.block_state)  // concatenated, not summed
    out = torch::cat({out, recurrent ? recurrent_attention(h, k, v) : cross_attention(h, cache, offset, states)}, 1);
  return out_proj(out.transpose(1, 2).reshape({h.size(0), h.size(1), -1}));
}

at::Tensor BlockStateLayerImpl::cross_attention(const at::Tensor& h, LayerKvCache* cache, std::int64_t offset,
                                                const at::Tensor& given_states) {
  const std::int64_t batch = h.size(0), length = h.size(1), d = options_.d_model, heads = options_.heads;
  const std::int64_t window = options_.window;
  // The SSM runs once over the whole sequence, before any blocking; decoding carries its state.
  at::Tensor states = given_states;  // [B, O, C, T]
  if (!states.defined()) {
    const at::Tensor u = ssm_in(h).transpose(1, 2);
    states = cache ? ssm->step(u, cache->ssm_state) : ssm(u);
  }
  attn::AttentionCall call;
  call.q = split_heads(context_q(h), heads);
  call.training = is_training();
  attn::LayerSpec spec;
  attn::TokenLayout query_blocks, key_blocks;
  at::Tensor k, v;
  if (options_.context != ContextStates::MF) {
    // SH / MH: block k reads the states at its own positions, j <= i (y_j reads u_{<= j} only).
    k = split_heads(torch::einsum("bocl,oce->bloe", {states, key_lift}).reshape({batch, length, d}), heads);
    v = split_heads(torch::einsum("bocl,oce->bloe", {states, value_lift}).reshape({batch, length, d}), heads);
    if (cache) join_cached_keys(cache->context_k, cache->context_v, k, v, offset, window, 0, call);
    call.causal = true;
    spec = spec_of(attn::Mask::blocks(window, 0));
  } else {
    // MF: block k reads the S filters' outputs at the last token of block k - 1; block 0 a
    // learned initial context. Every query of a block sees all S of them (no mask). Contexts
    // are made for the blocks from the first query's to the next position's (which the cache
    // keeps for the next call); the first one comes from the cache unless it is block 0.
    const std::int64_t first = offset / window, last = (offset + length) / window, filters = options_.filters;
    at::Tensor context = initial_context.unsqueeze(0).unsqueeze(0).expand({batch, 1, filters, d});
    if (last > first) {
      const at::Tensor ends = torch::arange(first + 1, last + 1, torch::kLong) * window - 1 - offset;
      const at::Tensor read = states.index_select(3, ends);  // [B, S, C, last - first]
      context = torch::cat({context, torch::einsum("bscn,cd->bnsd", {read, lift})}, 1);
    }
    context = (context + context_ids).reshape({batch, -1, d});
    k = split_heads(context_k(context), heads);
    v = split_heads(context_v(context), heads);
    if (cache != nullptr && offset > 0) {  // the first block's context, made by the call before
      k = torch::cat({cache->context_k, k.narrow(2, filters, k.size(2) - filters)}, 2);
      v = torch::cat({cache->context_v, v.narrow(2, filters, v.size(2) - filters)}, 2);
    }
    if (cache) {
      cache->context_k = k.narrow(2, k.size(2) - filters, filters).contiguous();
      cache->context_v = v.narrow(2, v.size(2) - filters, filters).contiguous();
    }
    same_block_layouts(offset, length, window, first, k.size(2), filters, query_blocks, key_blocks);
    call.query_layout = &query_blocks;
    call.key_layout = &key_blocks;
    spec = spec_of(attn::Mask::of(attn::MaskKind::SameSegment));
  }
  call.k = k;
  call.v = v;
  call.spec = &spec;
  return attn::attend(call, options_.kernel);
}

at::Tensor BlockStateLayerImpl::recurrent_attention(const at::Tensor& h, const at::Tensor& k, const at::Tensor& v) {
  const std::int64_t batch = h.size(0), length = h.size(1), d = options_.d_model, heads = options_.heads;
  const std::int64_t window = options_.window, states = options_.filters;
  const std::int64_t blocks = (length + window - 1) / window;
  const at::Tensor keep = torch::sigmoid(gate_bias);
  at::Tensor state = initial_context.unsqueeze(0).expand({batch, states, d});
  std::vector<at::Tensor> keys, values;  // each block's view of the state, [B, H, S, Dh]
  for (std::int64_t b = 0; b < blocks; ++b) {
    const at::Tensor s = state_norm(state) + state_positions;
    keys.push_back(split_heads(state_k(s), heads));
    values.push_back(split_heads(state_v(s), heads));
    if (b + 1 == blocks) break;  // no block reads the state after the last one
    attn::AttentionCall self;  // the state reads itself
    self.q = split_heads(state_q(s), heads);
    self.k = keys.back();
    self.v = values.back();
    attn::AttentionCall read;  // and blocks b - 1 and b, all of them (the next block reads the result)
    const std::int64_t from = std::max<std::int64_t>(0, (b - 1) * window), to = std::min(length, (b + 1) * window);
    read.q = split_heads(state_q2(s), heads);
    read.k = k.narrow(2, from, to - from);
    read.v = v.narrow(2, from, to - from);
    self.training = read.training = is_training();
    const at::Tensor both = torch::cat({attn::attend(self, options_.kernel), attn::attend(read, options_.kernel)}, 1);
    const at::Tensor update = state_out(both.transpose(1, 2).reshape({batch, states, 2 * d}));
    state = state * keep + update * (1 - keep);
  }
  // The tokens' second queries read their own block's state, unmasked (as MF's contexts).
  attn::AttentionCall call;
  call.q = split_heads(context_q(h), heads);
  call.k = torch::cat(keys, 2);
  call.v = torch::cat(values, 2);
  attn::TokenLayout query_blocks, key_blocks;
  same_block_layouts(0, length, window, 0, blocks * states, states, query_blocks, key_blocks);
  call.query_layout = &query_blocks;
  call.key_layout = &key_blocks;
  const attn::LayerSpec spec = spec_of(attn::Mask::of(attn::MaskKind::SameSegment));
  call.spec = &spec;
  call.training = is_training();
  return attn::attend(call, options_.kernel);
}

}  // namespace strata::nn
