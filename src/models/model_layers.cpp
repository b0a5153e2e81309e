#include "strata/models/model_layers.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::models {

void check_architecture(const ModelConfig& config, Architecture architecture) {
  config.check();
  if (config.architecture != architecture)
    throw Error("model.architecture: a " + architecture_name(architecture) + " model was asked for, the config says '" +
                architecture_name(config.architecture) + "'");
}

nn::StackOptions stack_options(const ModelConfig& config, std::int64_t layers) {
  nn::StackOptions options;
  options.layers = layers;
  options.max_positions = config.max_positions;
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

}  // namespace strata::models
