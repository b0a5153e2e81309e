#pragma once
// The decoder-only causal language model (GPT-2-like): token and learned position
// embeddings, causal self-attention layers without cross-attention, the output projection
// tied to the embeddings unless configured apart.
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "strata/models/model_config.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

class CausalLmImpl : public torch::nn::Module {
 public:
  explicit CausalLmImpl(const ModelConfig& config);

  // ids: [B, T] -> logits [B, T, V]. With a cache, ids are the new positions only.
  at::Tensor forward(const at::Tensor& ids, nn::KvCache* cache = nullptr);

  nn::KvCache new_cache() const { return nn::KvCache(config_.decoder_layers); }
  const ModelConfig& config() const { return config_; }

  torch::nn::Embedding embed_tokens{nullptr};
  nn::TransformerDecoder decoder{nullptr};
  torch::nn::Linear lm_head{nullptr};  // only when embeddings are not tied

 private:
  ModelConfig config_;
};
TORCH_MODULE(CausalLm);

}  // namespace strata::models
