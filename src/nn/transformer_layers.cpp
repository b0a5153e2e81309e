#include "strata/nn/transformer_layers.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::nn {

torch::nn::LayerNorm layer_norm(std::int64_t d) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}));
}

namespace {

// norm(x), or with `weight` [B, 1, d] in place of the norm's own weight when it is defined.
at::Tensor apply_norm(torch::nn::LayerNorm& norm, const at::Tensor& x, const at::Tensor& weight) {
  if (!weight.defined()) return norm(x);
  const auto& o = norm->options;
  return torch::layer_norm(x, o.normalized_shape(), {}, {}, o.eps()) * weight + norm->bias;
}

// One residual block: x + dropout(f(norm(x))) before the norm (pre-norm), or
// norm(x + dropout(f(x))) after it (post-norm). norm_weight: as apply_norm.
template <class F>
at::Tensor residual(const at::Tensor& x, torch::nn::LayerNorm& norm, const LayerOptions& options,
                    bool training, F&& branch, const at::Tensor& norm_weight = {}) {
  if (options.pre_norm) return x + torch::dropout(branch(apply_norm(norm, x, norm_weight)), options.dropout, training);
  return apply_norm(norm, x + torch::dropout(branch(x), options.dropout, training), norm_weight);
}

void check_activation(const LayerOptions& options) {
  if (options.activation != "gelu" && options.activation != "relu")
    throw Error("model.activation: unknown activation '" + options.activation + "' (known: gelu, relu)");
}

}  // namespace

at::Tensor feed_forward(const at::Tensor& x, AdaptableLinear& fc1, AdaptableLinear& fc2,
                        const LayerOptions& options, bool training) {
  at::Tensor h = fc1(x);
  h = options.activation == "relu" ? torch::relu(h) : torch::gelu(h);
  return fc2(torch::dropout(h, options.activation_dropout, training));
}

EncoderLayerImpl::EncoderLayerImpl(const LayerOptions& options) : options_(options) {
  check_activation(options);
  const std::int64_t d = options.attention.d_model;
  self_attn = register_module("self_attn", MultiHeadAttention(options.attention));
  if (options.pal.size > 0)
    pal = register_module("pal", ProjectedAttentionLayer(options.attention, options.pal));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(d));
  fc1 = register_module("fc1", AdaptableLinear(d, options.d_ff));
  fc2 = register_module("fc2", AdaptableLinear(options.d_ff, d));
  final_layer_norm = register_module("final_layer_norm", layer_norm(d));
}

at::Tensor EncoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& padding,
                                     const attn::TokenLayout* layout, const PrefixKv* prefix,
                                     const LayerConditioning* conditioning) {
  const bool training = is_training();
  const LayerConditioning none;
  const LayerConditioning& c = conditioning ? *conditioning : none;
  at::Tensor h = residual(
      x, self_attn_layer_norm, options_, training,
      [&](const at::Tensor& in) {
        at::Tensor out = self_attn->self_attention(in, padding, /*causal=*/false, nullptr,
                                                   {.layout = layout, .prefix = prefix, .bias = c.attention_bias});
        return pal ? out + pal(in, padding, layout) : out;
      },
      c.self_attn_norm_weight);
  return residual(
      h, final_layer_norm, options_, training,
      [&](const at::Tensor& in) {
        const at::Tensor out = feed_forward(in, fc1, fc2, options_, training);
        return c.feed_forward_output ? c.feed_forward_output(out) : out;
      },
      c.final_norm_weight);
}

DecoderLayerImpl::DecoderLayerImpl(const LayerOptions& options, bool cross_attention)
    : options_(options) {
  check_activation(options);
  const std::int64_t d = options.attention.d_model;
  self_attn = register_module("self_attn", MultiHeadAttention(options.attention));
  self_attn_layer_norm = register_module("self_attn_layer_norm", layer_norm(d));
  if (cross_attention) {
    AttentionOptions cross = options.attention;
    cross.spec = options.cross_spec;
    encoder_attn = register_module("encoder_attn", MultiHeadAttention(cross));
    encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", layer_norm(d));
  }
  fc1 = register_module("fc1", AdaptableLinear(d, options.d_ff));
  fc2 = register_module("fc2", AdaptableLinear(options.d_ff, d));
  final_layer_norm = register_module("final_layer_norm", layer_norm(d));
}

at::Tensor DecoderLayerImpl::forward(const at::Tensor& x, const at::Tensor& padding,
                                     const at::Tensor& memory, const at::Tensor& memory_padding,
                                     LayerKvCache* cache, const AttentionExtras& self,
                                     const AttentionExtras& cross) {
  const bool training = is_training();
  at::Tensor h = residual(x, self_attn_layer_norm, options_, training, [&](const at::Tensor& in) {
    return self_attn->self_attention(in, padding, /*causal=*/true, cache, self);
  });
  if (encoder_attn) {
    h = residual(h, encoder_attn_layer_norm, options_, training, [&](const at::Tensor& in) {
      return encoder_attn->cross_attention(in, memory, memory_padding, cache, cross);
    });
  }
  return residual(h, final_layer_norm, options_, training, [&](const at::Tensor& in) {
    return feed_forward(in, fc1, fc2, options_, training);
  });
}

}  // namespace strata::nn
