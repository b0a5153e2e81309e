#include "strata/nn/projected_attention_layer.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::nn {

ProjectedAttentionLayerImpl::ProjectedAttentionLayerImpl(const AttentionOptions& layer,
                                                         const PalOptions& options) {
  if (options.size <= 0)
    throw Error(std::string("model.pal_size: must be positive for a PAL, got ") + std::to_string(options.size));
  if (options.heads <= 0 || options.size % options.heads != 0)
    throw Error(std::string("model.pal_size: the PAL size ") + std::to_string(options.size) +
                " is not divisible by model.pal_heads " + std::to_string(options.heads));
  // The layer's kernel and dropout; its own size, heads and spec, its own projections and
  // bias table (none of the layer's Longformer projections or shared T5 table).
  AttentionOptions attention;
  attention.kernel = layer.kernel;
  attention.dropout = layer.dropout;
  attention.d_model = options.size;
  attention.heads = options.heads;
  attention.spec = options.spec;
  down = register_module("down", torch::nn::Linear(layer.d_model, options.size));
  attn = register_module("attn", MultiHeadAttention(attention));
  up = register_module("up", ZeroInitLinear(options.size, layer.d_model));
}

at::Tensor ProjectedAttentionLayerImpl::forward(const at::Tensor& x, const at::Tensor& padding,
                                                const strata::attn::TokenLayout* layout) {
  return up(attn->self_attention(down(x), padding, /*causal=*/false, nullptr, {.layout = layout}));
}

}  // namespace strata::nn
