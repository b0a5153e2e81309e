#pragma once
// The encoder-decoder (BART-like): shared token embeddings, learned positions, post- or
// pre-LayerNorm layers, output projection tied to the embeddings unless configured apart.
// Parameter names follow HF BART without its "model." prefix (shared, encoder.layers.0...,
// decoder.layers.0.encoder_attn..., lm_head when untied).
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <optional>

#include "strata/attn/token_layout.h"
#include "strata/models/model_config.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

struct EncoderOutput {
  at::Tensor hidden;   // [B, Ls, d]
  at::Tensor padding;  // [B, Ls] bool, true = real token
  std::optional<attn::TokenLayout> layout{};  // the source's layout, when the model reads it
};

// With prefixes (config.prefix_length > 0), encode() hands every attention module its
// layer's prefix keys and values, which the decode() calls after it then read: from the
// reparameterising MLP (`prefix`, trained) or, for a model built without it, from a tuned
// prefix file (set_fixed_prefix).
class Seq2SeqImpl : public torch::nn::Module {
 public:
  // prefix_mlp = false builds a prefixed model without the MLP, for a tuned prefix file.
  explicit Seq2SeqImpl(const ModelConfig& config, bool prefix_mlp = true);

  // source: [B, Ls] int64; padding: [B, Ls] bool (true = real), or undefined for none.
  // layout: the source's structure [B, Ls]; required when the model's attention reads it
  // (uses_layout()), ignored otherwise.
  EncoderOutput encode(const at::Tensor& source, const at::Tensor& padding,
                       const attn::TokenLayout* layout = nullptr);
  // Decoder hidden states [B, T, d] for decoder inputs [B, T]. With a cache, `inputs` are
  // the new positions only and the cache is advanced.
  at::Tensor decode(const at::Tensor& inputs, const EncoderOutput& encoded, nn::KvCache* cache = nullptr);
  at::Tensor logits(const at::Tensor& hidden);  // [.., d] -> [.., V]
  // Teacher-forced logits [B, T, V].
  at::Tensor forward(const at::Tensor& source, const at::Tensor& padding, const at::Tensor& decoder_inputs,
                     const attn::TokenLayout* layout = nullptr);
  // Whether encode() needs the source layout: a structured encoder or cross-attention spec,
  // or HIBRIDS-DEC.
  bool uses_layout() const;

  nn::KvCache new_cache() const { return nn::KvCache(config_.decoder_layers); }
  const ModelConfig& config() const { return config_; }

  // The prefix keys and values every layer gets: the MLP's output, or the fixed ones.
  // strata::Error for a model without prefixes, or built without the MLP and given none.
  nn::PrefixStates prefix_states();
  void set_fixed_prefix(nn::PrefixStates states) { fixed_prefix_ = std::move(states); }

  torch::nn::Embedding shared{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::TransformerDecoder decoder{nullptr};
  nn::AdaptableLinear lm_head{nullptr};  // only when embeddings are not tied
  nn::PrefixTuning prefix{nullptr};     // only with prefixes and their MLP

 private:
  void install_prefixes();

  ModelConfig config_;
  std::optional<nn::PrefixStates> fixed_prefix_;
};
TORCH_MODULE(Seq2Seq);

}  // namespace strata::models
