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

}  // namespace strata::models
