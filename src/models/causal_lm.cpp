#include "strata/models/causal_lm.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"

namespace strata::models {

CausalLmImpl::CausalLmImpl(const ModelConfig& config) : config_(config) {
  check_stacks(config, "causal_lm", {.decoder = true});
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.d_model));
  decoder = register_module("decoder", nn::TransformerDecoder(stack_options(config, Stack::Decoder),
                                                              embed_tokens, /*cross_attention=*/false));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", nn::AdaptableLinear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  final_logits_bias = register_final_logits_bias(*this, config);
  init_weights(*this, config.pad_id);
}

at::Tensor CausalLmImpl::forward(const at::Tensor& ids, nn::KvCache* cache, const at::Tensor& padding) {
  const at::Tensor hidden = decoder(ids, padding, at::Tensor(), at::Tensor(), cache);
  return output_logits(config_, hidden, embed_tokens->weight, lm_head, final_logits_bias);
}

}  // namespace strata::models
