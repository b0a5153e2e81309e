#include "strata/models/bst_lm.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"
#include "strata/nn/transformer_layers.h"
#include "strata/nn/dropout.h"

namespace strata::models {

std::vector<std::int64_t> bst_layer_indices(const ModelConfig& config) {
  const std::vector<bool> chosen = layer_indices("model.bst_layers", config.bst_layers, config.decoder_layers);
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < chosen.size(); ++i)
    if (chosen[i]) out.push_back(static_cast<std::int64_t>(i));
  return out;
}

nn::BlockStateOptions block_state_options(const ModelConfig& config, std::int64_t index) {
  nn::BlockStateOptions o;
  o.d_model = config.d_model;
  o.heads = config.heads;
  o.d_ff = config.d_ff;
  o.window = config.bst_window;
  if (config.bst_memory != "window" && config.bst_memory != "xl")
    throw Error("model.bst_memory: unknown memory '" + config.bst_memory + "' (known: window, xl)");
  o.xl_memory = config.bst_memory == "xl";
  o.dropout = config.dropout;
  o.activation = config.activation;
  o.pre_norm = config.pre_norm;
  o.kernel = attn::kernel_from_name(config.attention_kernel);
  const std::vector<std::int64_t> bst = bst_layer_indices(config);
  o.block_state = std::find(bst.begin(), bst.end(), index) != bst.end();
  o.context = nn::context_states_from_name(config.bst_context);
  o.filters = config.bst_filters;
  o.ssm.kernel = config.bst_kernel;
  const std::int64_t width_divisor = o.context == nn::ContextStates::MF ? 8 : 4;
  o.ssm.channels = config.bst_ssm_width > 0 ? config.bst_ssm_width : std::max<std::int64_t>(1, config.d_model / width_divisor);
  o.ssm.states = config.bst_states;
  o.ssm.filter_length = config.bst_filter_length;
  return o;
}

BstLmImpl::BstLmImpl(const ModelConfig& config) : config_(config) {
  check_stacks(config, "bst_lm", {.decoder = true});
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.d_model));
  layers = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.decoder_layers; ++i)
    layers->push_back(nn::BlockStateLayer(block_state_options(config, i)));
  if (config.pre_norm) final_norm = register_module("final_norm", nn::layer_norm(config.d_model));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", nn::AdaptableLinear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  init_weights(*this, config.pad_id);
}

at::Tensor BstLmImpl::forward(const at::Tensor& ids, nn::KvCache* cache) {
  if (cache != nullptr && cache->layers.size() != layers->size())
    throw Error("bst_lm: the cache has " + std::to_string(cache->layers.size()) + " layers, the model " +
                std::to_string(layers->size()) + " (make it with new_cache())");
  const std::int64_t offset = cache ? cache->length : 0;
  at::Tensor x = nn::dropout(embed_tokens(ids), config_.dropout, is_training());
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers[i]->as<nn::BlockStateLayer>()->forward(x, cache ? &cache->layers[i] : nullptr, offset);
  if (cache) cache->length += ids.size(1);
  if (final_norm) x = final_norm(x);
  return lm_head ? lm_head(x) : torch::matmul(x, embed_tokens->weight.t());
}

at::Tensor BstLmImpl::logits(const at::Tensor& ids, nn::KvCache* cache, const at::Tensor& padding) {
  if (padding.defined()) throw Error("bst_lm: padded inputs are not supported; give rows of one length");
  return forward(ids, cache);
}

}  // namespace strata::models
