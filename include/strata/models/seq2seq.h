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
#include "strata/models/section_encoder.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

// What decoding reads of the source: the encoder's output and, with prefixes, the keys and
// values every prefixed layer gets (computed once by encode(), passed to each decode() call).
struct EncoderOutput {
  at::Tensor hidden;   // [B, Ls, d]
  at::Tensor padding;  // [B, Ls] bool, true = real token
  std::optional<attn::TokenLayout> layout{};  // the source's layout, when the model reads it
  std::optional<nn::PrefixStates> prefixes{};  // shared by the batch: [1, H, P, Dh] each
  // model.copy: the source's token ids [B, Ls] and the copy attention's keys [B, Ls, d].
  at::Tensor source{}, copy_keys{};
};

// With prefixes (config.prefix_length > 0) the keys and values come from the
// reparameterising MLP (`prefix`, trained) or, once tuned, from an adapter file
// (set_fixed_prefix, which drops the MLP). Blocked prefixes (prefix_encoder_blocks > 1) read each
// source token's segment from the layout, which the data cut into that many parts.
class Seq2SeqImpl : public torch::nn::Module {
 public:
  explicit Seq2SeqImpl(const ModelConfig& config);

  // source: [B, Ls] int64; padding: [B, Ls] bool (true = real), or undefined for none.
  // layout: the source's structure [B, Ls]; required when the model's attention reads it
  // (uses_layout()), ignored otherwise.
  EncoderOutput encode(const at::Tensor& source, const at::Tensor& padding,
                       const attn::TokenLayout* layout = nullptr);
  // Decoder hidden states [B, T, d] for decoder inputs [B, T]. With a cache, `inputs` are
  // the new positions only and the cache is advanced. padding: [B, T] true = a real target
  // position (what a top-p cross-attention counts), or undefined for all.
  at::Tensor decode(const at::Tensor& inputs, const EncoderOutput& encoded, nn::KvCache* cache = nullptr,
                    const at::Tensor& padding = {});
  at::Tensor logits(const at::Tensor& hidden);  // [.., d] -> [.., V], the vocabulary's
  // What the next token is scored by, from decoder hidden states [B, T, d] or [B, d]: the
  // logits, or with model.copy the pointer-generator's log-probabilities
  // log(g · softmax(logits) + (1 − g) · copy), where copy puts the copy attention's weight on
  // each source token's id. softmax leaves log-probabilities unchanged, so losses and
  // decoders read both alike.
  // `inputs`, the decoder inputs [B, T] (or [B] / [B, 1] for a step), give the copy its
  // span bias; undefined: none.
  at::Tensor next_token_scores(const at::Tensor& hidden, const EncoderOutput& encoded, const at::Tensor& inputs = {});
  // log p(label) [B, T] under the next-token distribution, from hidden states [B, T, d];
  // 0 where the label is models::kIgnoreLabel. With model.copy this builds no [B, T, V]
  // mixture: the vocabulary's share is read at the label, the copy's from the attention on
  // the source positions that hold it (what training needs, in memory B·T·(V + Ls)).
  at::Tensor label_log_probs(const at::Tensor& hidden, const EncoderOutput& encoded, const at::Tensor& labels,
                             const at::Tensor& inputs = {});
  // MULTITASK's auxiliary loss (model.section_relation_head): the mean cross-entropy of the
  // bilinear classifier's HIBRIDS_S relation (attn::SelectedRelation) for every ordered pair of
  // sections that have tokens, from `encoded`'s token states mean-pooled per section.
  at::Tensor section_relation_loss(const EncoderOutput& encoded, const attn::TokenLayout& layout);
  // Teacher-forced next-token scores [B, T, V]; decoder_padding as decode()'s padding.
  at::Tensor forward(const at::Tensor& source, const at::Tensor& padding, const at::Tensor& decoder_inputs,
                     const attn::TokenLayout* layout = nullptr, const at::Tensor& decoder_padding = {});
  // Whether encode() needs the source layout: a structured encoder or cross-attention spec,
  // HIBRIDS-DEC, or blocked prefixes (their segments).
  bool uses_layout() const;

  nn::KvCache new_cache() const { return nn::KvCache(config_.decoder_layers); }
  const ModelConfig& config() const { return config_; }

  // The prefix keys and values every layer gets: the MLP's output, or the fixed ones.
  // strata::Error for a model without prefixes.
  nn::PrefixStates prefix_states();
  // Tuned keys and values in place of the MLP, which is unregistered: its parameters are no
  // longer the model's. strata::Error for a model without prefixes.
  void set_fixed_prefix(nn::PrefixStates states);

  torch::nn::Embedding shared{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::TransformerDecoder decoder{nullptr};
  nn::AdaptableLinear lm_head{nullptr};  // only when embeddings are not tied
  nn::PrefixTuning prefix{nullptr};     // only with prefixes and their MLP
  SectionEncoder section_encoder{nullptr};  // only with model.section_encoder_layers (HIERENC)
  torch::nn::Bilinear relation_classifier{nullptr};  // only with model.section_relation_head (MULTITASK)
  at::Tensor final_logits_bias;         // [1, V] buffer, only with model.final_logits_bias
  // model.copy: the copy attention's projections (one head) and the gate over [hidden; context].
  torch::nn::Linear copy_query{nullptr}, copy_key{nullptr}, copy_gate{nullptr};
  // [1]: added to the copy attention's score of each source position that follows an
  // occurrence of the decoder's input token (a copy goes on where it left off).
  at::Tensor copy_follow;
  // [kCopyPositionBuckets]: added to the copy attention's score of each source position by its
  // log2 bucket (0, 1-2, 3-6, ...), so the copy can learn where on the page NAME lines come from.
  static constexpr std::int64_t kCopyPositionBuckets = 12;
  at::Tensor copy_position;

 private:
  // The copy attention's weights [B, T, Ls] over the source and the gate's logit [B, T, 1]
  // (sigmoid: the share generated from the vocabulary), for hidden states [B, T, d].
  struct CopyParts {
    at::Tensor weights, gate;
  };
  CopyParts copy_parts(const at::Tensor& hidden, const EncoderOutput& encoded, const at::Tensor& inputs);

  ModelConfig config_;
  std::optional<nn::PrefixStates> fixed_prefix_;
};
TORCH_MODULE(Seq2Seq);

}  // namespace strata::models
