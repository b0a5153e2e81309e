#include "strata/models/seq2seq.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"
#include "strata/models/prefix_settings.h"

namespace strata::models {

namespace {

nn::PrefixOptions prefix_options(const ModelConfig& config) {
  nn::PrefixOptions o;
  o.length = config.prefix_length;
  o.hidden = config.prefix_hidden;
  o.d_model = config.d_model;
  o.heads = config.heads;
  o.encoder_layers = prefix_layers(config, config.encoder_layers);
  o.decoder_layers = prefix_layers(config, config.decoder_layers);
  if (config.prefix_encoder_blocks > 1) o.encoder_groups = nn::prefix_groups(o.length, config.prefix_encoder_blocks);
  if (config.prefix_decoder_blocks > 1) o.decoder_groups = nn::prefix_groups(o.length, config.prefix_decoder_blocks);
  return o;
}

void install(torch::nn::ModuleList& layers, const std::vector<std::optional<nn::PrefixKv>>& states,
             nn::MultiHeadAttention (*attention)(const std::shared_ptr<torch::nn::Module>&)) {
  for (std::size_t i = 0; i < layers->size(); ++i) {
    nn::MultiHeadAttention module = attention(layers[i]);
    if (states[i]) {
      module->set_prefix(*states[i]);
    } else {
      module->clear_prefix();
    }
  }
}

}  // namespace

Seq2SeqImpl::Seq2SeqImpl(const ModelConfig& config, bool prefix_mlp) : config_(config) {
  check_stacks(config, "seq2seq", {.encoder = true, .decoder = true, .cross_attention = true, .prefixes = true});
  shared = register_module("shared", torch::nn::Embedding(config.vocab_size, config.d_model));
  encoder = register_module("encoder", nn::TransformerEncoder(stack_options(config, Stack::Encoder), shared));
  decoder = register_module(
      "decoder", nn::TransformerDecoder(stack_options(config, Stack::Decoder), shared, /*cross_attention=*/true));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", nn::AdaptableLinear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  if (config.prefix_length > 0 && prefix_mlp)
    prefix = register_module("prefix", nn::PrefixTuning(prefix_options(config)));
  init_weights(*this, config.pad_id);
}

nn::PrefixStates Seq2SeqImpl::prefix_states() {
  if (config_.prefix_length == 0) throw Error("the model has no prefixes (model.prefix_length = 0)");
  if (prefix) return prefix->forward();
  if (!fixed_prefix_) throw Error("the model was built for a tuned prefix file, but none was loaded");
  return *fixed_prefix_;
}

void Seq2SeqImpl::install_prefixes() {
  if (config_.prefix_length == 0) return;
  const nn::PrefixStates states = prefix_states();
  install(encoder->layers, states.encoder, [](const std::shared_ptr<torch::nn::Module>& layer) {
    return layer->as<nn::EncoderLayer>()->self_attn;
  });
  install(decoder->layers, states.decoder, [](const std::shared_ptr<torch::nn::Module>& layer) {
    return layer->as<nn::DecoderLayer>()->self_attn;
  });
  install(decoder->layers, states.cross, [](const std::shared_ptr<torch::nn::Module>& layer) {
    return layer->as<nn::DecoderLayer>()->encoder_attn;
  });
}

bool Seq2SeqImpl::uses_layout() const {
  for (const auto* specs : {&config_.encoder_attention, &config_.cross_attention})
    for (const attn::LayerSpec& spec : *specs)
      if (spec.reads_layout()) return true;
  return config_.decoder_hibrids.kind != attn::RelationKind::None;
}

EncoderOutput Seq2SeqImpl::encode(const at::Tensor& source, const at::Tensor& padding,
                                  const attn::TokenLayout* layout) {
  install_prefixes();
  const bool structured = uses_layout();
  if (structured && layout == nullptr)
    throw Error("this model's attention reads the source's structure (model.encoder_attention, "
                "cross_attention or decoder_hibrids), but no source layout was given");
  std::optional<attn::TokenLayout> kept;
  if (structured) kept = *layout;
  // Prefix blocking reads each token's segment: the model's own even split of the input.
  std::optional<attn::TokenLayout> blocked;
  if (config_.prefix_encoder_blocks > 1) {
    blocked = structured ? *layout : attn::TokenLayout{};
    blocked->segment = nn::encoder_segments(padding, source.size(1), config_.prefix_encoder_blocks)
                           .expand({source.size(0), source.size(1)})
                           .contiguous()
                           .to(source.device());
  }
  const attn::TokenLayout* encoder_layout = blocked ? &*blocked : structured ? layout : nullptr;
  return {encoder(source, padding, encoder_layout), padding, kept};
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
