#pragma once
// What language modelling trains (train::LmTask) and decoding continues
// (decode::CausalLmStepper): a module that gives next-token logits for token ids, with or
// without a key/value cache. A new language-model family implements it and reuses both.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include "strata/models/model_config.h"
#include "strata/nn/kv_cache.h"

namespace strata::models {

class LanguageModel : public torch::nn::Module {
 public:
  // ids: [B, T] int64 -> logits [B, T, V]. With a cache, ids are the new positions only and
  // the cache is advanced. padding: [B, T] true = a real token, or undefined for all real; a
  // model that cannot take padding says so (strata::Error).
  virtual at::Tensor logits(const at::Tensor& ids, nn::KvCache* cache = nullptr, const at::Tensor& padding = {}) = 0;
  virtual nn::KvCache new_cache() const = 0;
  virtual const ModelConfig& config() const = 0;
  // The most tokens one pass may read (learned positions); 0 = no limit.
  virtual std::int64_t max_length() const { return 0; }
};

}  // namespace strata::models
