#include "strata/models/model_layers.h"

#include <torch/torch.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/nn/linear_product.h"

namespace strata::models {

namespace {
std::vector<attn::LayerSpec> per_layer(const std::vector<attn::LayerSpec>& specs, std::int64_t layers) {
  std::vector<attn::LayerSpec> out;
  if (!specs.empty())
    for (std::int64_t i = 0; i < layers; ++i) out.push_back(ModelConfig::spec_of(specs, i));
  return out;
}
}  // namespace

nn::StackOptions stack_options(const ModelConfig& config, Stack stack) {
  nn::StackOptions options;
  const std::int64_t layers = stack == Stack::Encoder ? config.encoder_layers : config.decoder_layers;
  options.layers = layers;
  if (stack == Stack::Encoder) {
    options.self_specs = per_layer(config.encoder_attention, layers);
    options.pal_specs = per_layer(config.pal_attention, layers);
    options.layer.pal.size = config.pal_size;
    options.layer.pal.heads = config.pal_heads;
  } else {
    options.self_specs = per_layer(config.decoder_attention, layers);
    options.cross_specs = per_layer(config.cross_attention, layers);
    options.hibrids = config.decoder_hibrids;
    options.query_blocks = config.prefix_decoder_blocks;
    options.segment_length = config.prefix_decoder_segment;
  }
  options.max_positions = stack == Stack::Decoder && config.decoder_max_positions > 0 ? config.decoder_max_positions
                                                                                       : config.max_positions;
  options.learned_positions = config.positions == "learned";
  options.position_offset = config.position_offset;
  options.embedding_scale = config.scale_embedding ? std::sqrt(static_cast<double>(config.d_model)) : 1.0;
  options.share_relation_bias = config.share_relation_bias;
  if (stack == Stack::Encoder) {
    options.token_types = config.token_types;
    options.layer.attention.global_projections = config.global_projections;
  }
  options.layer.attention.bias = config.linear_bias;
  options.layer.attention.scale = config.scale_attention;
  options.layer.bias = config.linear_bias;
  options.layer.gated = config.ffn_gated;
  options.layer.norm.rms = config.norm == "rms";
  options.layer.norm.eps = config.norm_eps;
  options.layer.attention.d_model = config.d_model;
  options.layer.attention.heads = config.heads;
  options.layer.attention.dropout = config.attention_dropout;
  options.layer.attention.kernel = attn::kernel_from_name(config.attention_kernel);
  options.layer.d_ff = config.d_ff;
  options.layer.dropout = config.dropout;
  options.layer.activation_dropout = config.activation_dropout;
  options.layer.pre_norm = config.pre_norm;
  options.layer.activation = config.activation;
  return options;
}

void init_weights(torch::nn::Module& model, std::int64_t pad_id) {
  torch::NoGradGuard no_grad;
  for (auto& module : model.modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, 0.02);
      if (linear->bias.defined()) linear->bias.zero_();
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, 0.02);
      if (pad_id >= 0 && pad_id < embedding->weight.size(0)) embedding->weight[pad_id].zero_();
    }
  }
}

at::Tensor output_logits(const ModelConfig& config, const at::Tensor& hidden, const at::Tensor& embedding,
                         nn::AdaptableLinear& lm_head, const at::Tensor& final_bias) {
  at::Tensor h = hidden;
  if (config.scale_decoder_outputs) h = h * std::pow(static_cast<double>(config.d_model), -0.5);
  // Tied to the embedding: h Eᵀ through the linear layers' product (E is a [vocab, d] weight,
  // as a linear layer's is), not matmul's BLAS call, which on two cores ran at ~60 % of its rate.
  at::Tensor logits = lm_head ? lm_head(h) : nn::linear_product(h, embedding, {});
  return final_bias.defined() ? logits + final_bias : logits;
}

at::Tensor register_final_logits_bias(torch::nn::Module& model, const ModelConfig& config) {
  if (!config.final_logits_bias) return {};
  return model.register_buffer("final_logits_bias", torch::zeros({1, config.vocab_size}));
}

}  // namespace strata::models
