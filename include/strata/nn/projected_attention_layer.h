#pragma once
// Projected Attention Layer (Stickland & Murray 2019; seed 003 Appendix A, Eq. 7): a small
// attention block run in parallel with an encoder layer's self-attention,
//   PAL(h) = up(MHA_pal(down(h))),
// with its own heads at hidden size `size`. Its heads take a spec like any other, so the
// seed's patterns (same_sentence, matching_token, previous/next token) are injected into
// the PAL's heads of a pretrained model (seed 003 §4.3.3). `up` starts at zero: a PAL added
// to a trained model leaves that model's output unchanged until it is trained.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

#include "strata/nn/multi_head_attention.h"
#include "strata/nn/zero_init_linear.h"

namespace strata::nn {

struct PalOptions {
  std::int64_t size = 0;  // the PAL's hidden size (seed 003: 256); 0 = no PAL
  std::int64_t heads = 4;
  attn::LayerSpec spec;   // the PAL heads' spec (plain by default)
};

class ProjectedAttentionLayerImpl : public torch::nn::Module {
 public:
  // layer: the encoder layer's attention options (d_model, dropout on the attention
  // probabilities and kernel are shared with it). strata::Error when the PAL's size is not
  // positive or not divisible by its heads.
  ProjectedAttentionLayerImpl(const AttentionOptions& layer, const PalOptions& options);

  // x: [B, L, d_model]; padding [B, L] (true = real) or undefined; layout: the tokens'
  // layout, read by a structured spec (qualified: the member `attn` hides the namespace).
  // Returns [B, L, d_model].
  at::Tensor forward(const at::Tensor& x, const at::Tensor& padding,
                     const strata::attn::TokenLayout* layout = nullptr);

  torch::nn::Linear down{nullptr};
  MultiHeadAttention attn{nullptr};
  ZeroInitLinear up{nullptr};
};
TORCH_MODULE(ProjectedAttentionLayer);

}  // namespace strata::nn
