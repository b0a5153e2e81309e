#pragma once
// ModelConfig → the nn options of its layers and stacks, and the weight initialisation all
// architectures share.
#include <torch/nn/module.h>

#include "strata/models/model_config.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

enum class Stack { Encoder, Decoder };

// The options of the model's encoder or decoder stack, with its layers' attention specs.
nn::StackOptions stack_options(const ModelConfig& config, Stack stack);

// BART's initialisation: N(0, 0.02) for linear and embedding weights, zero biases, zero
// padding embedding; LayerNorm at (1, 0).
void init_weights(torch::nn::Module& model, std::int64_t pad_id);

// The output projection of a generating model: hidden [.., d] -> logits [.., V] through
// `lm_head` when it exists (untied), else the token embedding; T5's d^-0.5 output scale when
// config.scale_decoder_outputs, and `final_bias` [1, V] when defined.
at::Tensor output_logits(const ModelConfig& config, const at::Tensor& hidden, const at::Tensor& embedding,
                         nn::AdaptableLinear& lm_head, const at::Tensor& final_bias);
// Registers `final_logits_bias` [1, V] (zeros, a buffer: it does not train, as in BART) when
// config.final_logits_bias; an undefined tensor otherwise.
at::Tensor register_final_logits_bias(torch::nn::Module& model, const ModelConfig& config);

}  // namespace strata::models
