#include "strata/models/seq2seq.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"

namespace strata::models {

Seq2SeqImpl::Seq2SeqImpl(const ModelConfig& config) : config_(config) {
  check_architecture(config, Architecture::Seq2Seq);
  shared = register_module("shared", torch::nn::Embedding(config.vocab_size, config.d_model));
  encoder = register_module("encoder", nn::TransformerEncoder(stack_options(config, config.encoder_layers), shared));
  decoder = register_module(
      "decoder", nn::TransformerDecoder(stack_options(config, config.decoder_layers), shared, /*cross_attention=*/true));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", torch::nn::Linear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  init_weights(*this, config.pad_id);
}

EncoderOutput Seq2SeqImpl::encode(const at::Tensor& source, const at::Tensor& padding) {
  return {encoder(source, padding), padding};
}

at::Tensor Seq2SeqImpl::decode(const at::Tensor& inputs, const EncoderOutput& encoded, nn::KvCache* cache) {
  return decoder(inputs, at::Tensor(), encoded.hidden, encoded.padding, cache);
}

at::Tensor Seq2SeqImpl::logits(const at::Tensor& hidden) {
  return lm_head ? lm_head(hidden) : torch::matmul(hidden, shared->weight.t());
}

at::Tensor Seq2SeqImpl::forward(const at::Tensor& source, const at::Tensor& padding,
                                const at::Tensor& decoder_inputs) {
  return logits(decode(decoder_inputs, encode(source, padding)));
}

}  // namespace strata::models
