#pragma once
// The encoder-only model (BERT-like) with a classification head:
//  - token:    one label per token              -> [B, L, C]
//  - marker:   one label per marker token (one vector per sentence or segment, e.g. the
//              [SEP] closing each) -> [M, C], with the (row, position) of each marker
//  - sequence: one label per sequence, from the first token's vector -> [B, C] (through
//              BERT's pooler, tanh(dense(.)), with model.pooler)
// With model.num_labels = 0 the model has no head: it only encodes (a pretrained BERT).
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "strata/models/model_config.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

struct Classification {
  at::Tensor logits;     // [B, L, C], [M, C] or [B, C] by head
  at::Tensor positions;  // marker head: [M, 2] int64 (row, position); undefined otherwise
};

class EncoderModelImpl : public torch::nn::Module {
 public:
  explicit EncoderModelImpl(const ModelConfig& config);

  // ids, padding: [B, L] (padding true = real) -> hidden [B, L, d]. layout: the tokens'
  // layout, needed when model.encoder_attention reads it (uses_layout()).
  // token_types: [B, L] int64 segment types (model.token_types > 0), or undefined for all 0.
  at::Tensor encode(const at::Tensor& ids, const at::Tensor& padding,
                    const attn::TokenLayout* layout = nullptr, const at::Tensor& token_types = {});
  Classification forward(const at::Tensor& ids, const at::Tensor& padding,
                         const attn::TokenLayout* layout = nullptr, const at::Tensor& token_types = {});
  // The head on encode()'s output: what forward() returns after encoding.
  Classification classify(const at::Tensor& encoded, const at::Tensor& ids, const at::Tensor& padding);
  // BERT's pooled vector tanh(pooler(hidden[:, 0])) [B, d]; strata::Error without a pooler.
  at::Tensor pool(const at::Tensor& hidden);
  // True when some encoder layer's spec reads the token layout.
  bool uses_layout() const;

  const ModelConfig& config() const { return config_; }

  torch::nn::Embedding embed_tokens{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::AdaptableLinear pooler{nullptr};      // only with model.pooler
  nn::AdaptableLinear classifier{nullptr};  // null with model.num_labels = 0

 private:
  ModelConfig config_;
};
TORCH_MODULE(EncoderModel);

}  // namespace strata::models
