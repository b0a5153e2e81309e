#pragma once
// The decoder-only causal language model (GPT-2-like): token and learned position
// embeddings, causal self-attention layers without cross-attention, the output projection
// tied to the embeddings unless configured apart. With model.segment_markers it derives each
// token's segment from the markers in its ids (and, decoding, from the cache), so that a
// model.decoder_attention mask can read the parts of the text (the TLM's: a local window for
// the intro and the rest, everything for the summary).
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <vector>

#include "strata/models/language_model.h"
#include "strata/models/model_config.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

class CausalLmImpl : public LanguageModel {
 public:
  explicit CausalLmImpl(const ModelConfig& config);

  // ids: [B, T] -> logits [B, T, V]. With a cache, ids are the new positions only.
  // padding: [B, T] true = a real token, or undefined. No query sees a padded key. Without a
  // cache positions count from 0 in every row (right padding); with one they count each row's
  // real tokens (left-padded prompts, as transformers' generate() numbers them).
  at::Tensor forward(const at::Tensor& ids, nn::KvCache* cache = nullptr, const at::Tensor& padding = {});

  at::Tensor logits(const at::Tensor& ids, nn::KvCache* cache = nullptr, const at::Tensor& padding = {}) override {
    return forward(ids, cache, padding);
  }
  nn::KvCache new_cache() const override { return nn::KvCache(config_.decoder_layers); }
  const ModelConfig& config() const override { return config_; }
  std::int64_t max_length() const override { return config_.max_positions; }

  torch::nn::Embedding embed_tokens{nullptr};
  nn::TransformerDecoder decoder{nullptr};
  nn::AdaptableLinear lm_head{nullptr};  // only when embeddings are not tied
  at::Tensor final_logits_bias;         // [1, V] buffer, only with model.final_logits_bias

 private:
  ModelConfig config_;
  std::vector<std::int64_t> segment_markers_;  // empty unless a decoder_attention spec reads the layout
};
TORCH_MODULE(CausalLm);

}  // namespace strata::models
