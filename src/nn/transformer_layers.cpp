#include "strata/nn/transformer_layers.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/nn/dropout.h"

namespace strata::nn {

torch::nn::LayerNorm layer_norm(std::int64_t d) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}));
}

Norm block_norm(const LayerOptions& options) {
  NormOptions norm = options.norm;
  norm.d = options.attention.d_model;
  return Norm(norm);
}

namespace {

// norm(x), or with `weight` [B, 1, d] in place of the norm's own weight when it is defined.
at::Tensor apply_norm(Norm& norm, const at::Tensor& x, const at::Tensor& weight) {
  return weight.defined() ? norm->forward_with_weight(x, weight) : norm(x);
}

// One residual block: x + dropout(f(norm(x))) before the norm (pre-norm), or
// norm(x + dropout(f(x))) after it (post-norm). norm_weight: as apply_norm.
template <class F>
at::Tensor residual(const at::Tensor& x, Norm& norm, const LayerOptions& options,
                    bool training, F&& branch, const at::Tensor& norm_weight = {}) {
  if (options.pre_norm) return x + nn::dropout(branch(apply_norm(norm, x, norm_weight)), options.dropout, training);
  return apply_norm(norm, x + nn::dropout(branch(x), options.dropout, training), norm_weight);
}

// Registers the layer's fc1, fc_gate (gated blocks only) and fc2.
template <class Layer>
void register_feed_forward(Layer& layer, const LayerOptions& options) {
  const std::int64_t d = options.attention.d_model;
  auto linear = [&](std::int64_t in, std::int64_t out) {
    return AdaptableLinear(torch::nn::LinearOptions(in, out).bias(options.bias));
  };
  layer.fc1 = layer.register_module("fc1", linear(d, options.d_ff));
  if (options.gated) layer.fc_gate = layer.register_module("fc_gate", linear(d, options.d_ff));
  layer.fc2 = layer.register_module("fc2", linear(options.d_ff, d));
}

void check_activation(const LayerOptions& options) {
  if (options.activation != "gelu" && options.activation != "gelu_new" && options.activation != "relu")
    throw Error("model.activation: unknown activation '" + options.activation + "' (known: gelu, gelu_new, relu)");
}

}  // namespace

at::Tensor feed_forward(const at::Tensor& x, AdaptableLinear& fc1, AdaptableLinear& fc_gate, AdaptableLinear& fc2,
                        const LayerOptions& options, bool training) {
  at::Tensor h = fc1(x);
  // GELU straight into dropout: one pass each way (no gate between them).
  if (options.activation == "gelu" && !fc_gate) return fc2(nn::gelu_dropout(h, options.activation_dropout, training));
  if (options.activation == "relu") {
    h = torch::relu(h);
  } else {
    h = torch::gelu(h, options.activation == "gelu_new" ? "tanh" : "none");
  }
  if (fc_gate) h = h * fc_gate(x);
  return fc2(nn::dropout(h, options.activation_dropout, training));
}

EncoderLayerImpl::EncoderLayerImpl(const LayerOptions& options) : options_(options) {
  check_activation(options);
  self_attn = register_module("self_attn", MultiHeadAttention(options.attention));
  if (options.pal.size > 0)
    pal = register_module("pal", ProjectedAttentionLayer(options.attention, options.pal));
  self_attn_layer_norm = register_module("self_attn_layer_norm", block_norm(options));
  register_feed_forward(*this, options);
  final_layer_norm = register_module("final_layer_norm", block_norm(options));
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
        const at::Tensor out = feed_forward(in, fc1, fc_gate, fc2, options_, training);
        return c.feed_forward_output ? c.feed_forward_output(out) : out;
      },
      c.final_norm_weight);
}

DecoderLayerImpl::DecoderLayerImpl(const LayerOptions& options, bool cross_attention)
    : options_(options) {
  check_activation(options);
  self_attn = register_module("self_attn", MultiHeadAttention(options.attention));
  self_attn_layer_norm = register_module("self_attn_layer_norm", block_norm(options));
  if (cross_attention) {
    AttentionOptions cross = options.attention;
    cross.spec = options.cross_spec;
    encoder_attn = register_module("encoder_attn", MultiHeadAttention(cross));
    encoder_attn_layer_norm = register_module("encoder_attn_layer_norm", block_norm(options));
  }
  register_feed_forward(*this, options);
  final_layer_norm = register_module("final_layer_norm", block_norm(options));
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
    return feed_forward(in, fc1, fc_gate, fc2, options_, training);
  });
}

}  // namespace strata::nn
