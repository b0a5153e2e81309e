#include "strata/models/seq2seq.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"

namespace strata::models {

Seq2SeqImpl::Seq2SeqImpl(const ModelConfig& config) : config_(config) {
  check_architecture(config, Architecture::Seq2Seq);
  shared = register_module("shared", torch::nn::Embedding(config.vocab_size, config.d_model));
  encoder = register_module("encoder", nn::TransformerEncoder(stack_options(config, Stack::Encoder), shared));
  decoder = register_module(
      "decoder", nn::TransformerDecoder(stack_options(config, Stack::Decoder), shared, /*cross_attention=*/true));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  init_weights(*this, config.pad_id);
}

bool Seq2SeqImpl::uses_layout() const {
  for (const auto* specs : {&config_.encoder_attention, &config_.cross_attention})
    for (const attn::LayerSpec& spec : *specs)
      if (!spec.is_plain()) return true;
  return config_.decoder_hibrids.kind != attn::RelationKind::None;
}

EncoderOutput Seq2SeqImpl::encode(const at::Tensor& source, const at::Tensor& padding,
                                  const attn::TokenLayout* layout) {
  if (!uses_layout()) return {encoder(source, padding), padding, std::nullopt};
  if (layout == nullptr)
    throw Error("this model's attention reads the source's structure (model.encoder_attention, "
                "cross_attention or decoder_hibrids), but no source layout was given");
  return {encoder(source, padding, layout), padding, *layout};
}

at::Tensor Seq2SeqImpl::decode(const at::Tensor& inputs, const EncoderOutput& encoded, nn::KvCache* cache) {
  return decoder(inputs, at::Tensor(), encoded.hidden, encoded.padding, cache,
                 encoded.layout ? &*encoded.layout : nullptr);
}

at::Tensor Seq2SeqImpl::logits(const at::Tensor& hidden) {
  return lm_head ? lm_head(hidden) : torch::matmul(hidden, shared->weight.t());
}

at::Tensor Seq2SeqImpl::forward(const at::Tensor& source, const at::Tensor& padding,
                                const at::Tensor& decoder_inputs, const attn::TokenLayout* layout) {
  return logits(decode(decoder_inputs, encode(source, padding, layout)));
}

}  // namespace strata::models
