#pragma once
// Encoder and decoder layers: attention + feed-forward, each in a residual block with
// its norm after (post-norm, BART, BERT) or before (pre-norm, GPT-2, T5). Parameter names
// follow HF BART (self_attn, self_attn_layer_norm, encoder_attn, encoder_attn_layer_norm, fc1,
// fc2, final_layer_norm).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <functional>
#include <string>

#include "strata/nn/adaptable_linear.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/nn/norm.h"
#include "strata/nn/projected_attention_layer.h"

namespace strata::nn {

// A LayerNorm over the last dimension d (BART's, with weight and bias), for modules that do
// not take the norm from LayerOptions.
torch::nn::LayerNorm layer_norm(std::int64_t d);

struct LayerOptions {
  AttentionOptions attention;   // self-attention (its spec too)
  attn::LayerSpec cross_spec;   // decoder cross-attention's spec (the rest as `attention`)
  std::int64_t d_ff = 1024;
  double dropout = 0.1;             // on each residual branch
  double activation_dropout = 0.0;  // after the activation
  bool pre_norm = false;
  NormOptions norm;                 // its d is attention.d_model's
  bool bias = true;                 // biases in fc1 and fc2 (T5 has none)
  bool gated = false;               // act(fc1 x) * fc_gate(x) before fc2 (T5 v1.1, FLAN-T5)
  std::string activation = "gelu";  // "gelu" (erf), "gelu_new" (tanh approximation, GPT-2) or "relu"
  PalOptions pal;                   // encoder layers: a PAL beside self-attention (size 0 = none)
};

// The block's norm as `options` say (LayerNorm or RMS, its eps), over attention.d_model.
Norm block_norm(const LayerOptions& options);

// fc2(dropout(act(fc1(x)))), the position-wise feed-forward block; with a gate (not null),
// fc2(dropout(act(fc1(x)) * fc_gate(x))).
at::Tensor feed_forward(const at::Tensor& x, AdaptableLinear& fc1, AdaptableLinear& fc_gate, AdaptableLinear& fc2,
                        const LayerOptions& options, bool training);

// What a conditioned model (CA-MTL, thesis ch. 3) changes in an encoder layer, row by row of
// the batch; every field is optional and an empty one leaves that part as it is.
struct LayerConditioning {
  at::Tensor attention_bias;  // [B or 1, 1, L, L]: added to every head's self-attention scores
  // [B, 1, d]: the weight each LayerNorm uses instead of its own (its bias stays): the
  // conditional LayerNorm.
  at::Tensor self_attn_norm_weight, final_norm_weight;
  // Rewrites the feed-forward block's output before its residual add (a conditional bottleneck).
  std::function<at::Tensor(const at::Tensor&)> feed_forward_output;
};

// With a PAL (options.pal.size > 0) the self-attention block is seed 003 Eq. 7:
// LN(h + SA(h) + PAL(h)) post-norm, h + SA(LN h) + PAL(LN h) pre-norm.
class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const LayerOptions& options);
  // layout: the tokens' layout, for a structured self-attention spec (may be null otherwise).
  // prefix: this layer's prefix keys and values, or null. conditioning: or null.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& padding,
                     const attn::TokenLayout* layout = nullptr, const PrefixKv* prefix = nullptr,
                     const LayerConditioning* conditioning = nullptr);

  MultiHeadAttention self_attn{nullptr};
  ProjectedAttentionLayer pal{nullptr};  // null without a PAL
  Norm self_attn_layer_norm{nullptr}, final_layer_norm{nullptr};
  AdaptableLinear fc1{nullptr}, fc_gate{nullptr}, fc2{nullptr};  // fc_gate only when gated

 private:
  LayerOptions options_;
};
TORCH_MODULE(EncoderLayer);

// A causal self-attention block, then (when built with cross-attention) attention to the
// encoder's output, then the feed-forward block.
class DecoderLayerImpl : public torch::nn::Module {
 public:
  DecoderLayerImpl(const LayerOptions& options, bool cross_attention);
  // memory / memory_padding: the encoder output and its padding (undefined without
  // cross-attention). padding: [B, L] for the decoder's own keys, or undefined. self: the
  // new positions' layout (their segments under prefix blocking) and the layer's prefix.
  // cross: the memory's layout, the layer's cross prefix, which queries are real, a bias for
  // the cross-attention scores, or a request for its weights.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& padding, const at::Tensor& memory,
                     const at::Tensor& memory_padding, LayerKvCache* cache,
                     const AttentionExtras& self = {}, const AttentionExtras& cross = {});

  MultiHeadAttention self_attn{nullptr}, encoder_attn{nullptr};
  Norm self_attn_layer_norm{nullptr}, encoder_attn_layer_norm{nullptr}, final_layer_norm{nullptr};
  AdaptableLinear fc1{nullptr}, fc_gate{nullptr}, fc2{nullptr};  // fc_gate only when gated

 private:
  LayerOptions options_;
};
TORCH_MODULE(DecoderLayer);

}  // namespace strata::nn
