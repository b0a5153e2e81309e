#include "strata/models/encoder_model.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"
#include "strata/nn/dropout.h"

namespace strata::models {

EncoderModelImpl::EncoderModelImpl(const ModelConfig& config) : config_(config) {
  check_stacks(config, "encoder", {.encoder = true, .pals = true});
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.d_model));
  encoder = register_module("encoder", nn::TransformerEncoder(stack_options(config, Stack::Encoder), embed_tokens));
  if (config.pooler) pooler = register_module("pooler", nn::AdaptableLinear(config.d_model, config.d_model));
  if (config.num_labels > 0)
    classifier = register_module("classifier", nn::AdaptableLinear(config.d_model, config.num_labels));
  init_weights(*this, config.pad_id);
}

bool EncoderModelImpl::uses_layout() const {
  for (const auto* specs : {&config_.encoder_attention, &config_.pal_attention})
    for (const attn::LayerSpec& spec : *specs)
      if (spec.reads_layout()) return true;
  return false;
}

at::Tensor EncoderModelImpl::encode(const at::Tensor& ids, const at::Tensor& padding,
                                    const attn::TokenLayout* layout, const at::Tensor& token_types) {
  if (uses_layout() && layout == nullptr)
    throw Error("this model's attention reads the input's structure (model.encoder_attention or pal_attention), "
                "but no layout was given");
  return encoder(ids, padding, layout, nullptr, nullptr, token_types);
}

at::Tensor EncoderModelImpl::pool(const at::Tensor& hidden) {
  if (!pooler) throw Error("this encoder has no pooler (model.pooler = false)");
  return torch::tanh(pooler(hidden.select(1, 0)));
}

Classification EncoderModelImpl::forward(const at::Tensor& ids, const at::Tensor& padding,
                                         const attn::TokenLayout* layout, const at::Tensor& token_types) {
  return classify(encode(ids, padding, layout, token_types), ids, padding);
}

Classification EncoderModelImpl::classify(const at::Tensor& encoded, const at::Tensor& ids, const at::Tensor& padding) {
  if (!classifier) throw Error("this encoder has no classification head (model.num_labels = 0): it only encodes");
  switch (config_.head) {
    case EncoderHead::Token:
      return {classifier(nn::dropout(encoded, config_.dropout, is_training())), {}};
    case EncoderHead::Sequence:
      if (pooler) return {classifier(nn::dropout(pool(encoded), config_.dropout, is_training())), {}};
      return {classifier(nn::dropout(encoded, config_.dropout, is_training()).select(1, 0)), {}};
    case EncoderHead::Marker: {
      const at::Tensor hidden = nn::dropout(encoded, config_.dropout, is_training());
      at::Tensor is_marker = ids == config_.marker_id;
      if (padding.defined()) is_marker = is_marker.logical_and(padding);
      const at::Tensor positions = is_marker.nonzero();  // [M, 2], row-major order
      const at::Tensor vectors = hidden.index({positions.select(1, 0), positions.select(1, 1)});
      return {classifier(vectors), positions};
    }
  }
  throw Error("encoder: unknown head");
}

}  // namespace strata::models
