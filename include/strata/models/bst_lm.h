#pragma once
// The Block-State Transformer language model (thesis ch. 5): token embeddings without
// positions (the first BST layer's state-space model supplies them), a stack of SLIDE layers
// with BST layers at model.bst_layers, a final LayerNorm and the output projection tied to
// the embeddings unless configured apart. With bst_layers empty it is the SLIDE baseline.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include <vector>

#include "strata/models/language_model.h"
#include "strata/models/model_config.h"
#include "strata/nn/adaptable_linear.h"
#include "strata/nn/block_state_layer.h"

namespace strata::models {

// The layer options of layer `index` of a bst_lm config (a BST layer or a SLIDE layer).
nn::BlockStateOptions block_state_options(const ModelConfig& config, std::int64_t index);
// The BST layers' indices, from model.bst_layers ("" = none, "1,3"); strata::Error naming the
// field for a bad list or an index outside the stack.
std::vector<std::int64_t> bst_layer_indices(const ModelConfig& config);

class BstLmImpl : public LanguageModel {
 public:
  explicit BstLmImpl(const ModelConfig& config);

  // ids [B, T] -> logits [B, T, V]. With a cache (new_cache()), ids are the positions after
  // those it holds: each layer keeps the keys its next block can read and its state-space
  // model's state (S4D: the recurrence; the unstructured filter: its inputs, convolved again).
  at::Tensor forward(const at::Tensor& ids, nn::KvCache* cache = nullptr);

  at::Tensor logits(const at::Tensor& ids, nn::KvCache* cache = nullptr, const at::Tensor& padding = {}) override;
  nn::KvCache new_cache() const override { return nn::KvCache(layers->size()); }
  const ModelConfig& config() const override { return config_; }

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::ModuleList layers{nullptr};
  torch::nn::LayerNorm final_norm{nullptr};  // pre-norm only: post-norm layers end normed
  nn::AdaptableLinear lm_head{nullptr};  // only when embeddings are not tied

 private:
  ModelConfig config_;
};
TORCH_MODULE(BstLm);

}  // namespace strata::models
