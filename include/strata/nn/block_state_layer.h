#pragma once
// The layers of a Block-State Transformer (thesis ch. 5, Fig. 5.1; Meliad's cell). The
// sequence is cut into blocks of W tokens. A SLIDE layer attends from each block to itself
// and the block before, causally (the mask blocks(W, 1) & causal, so the fused kernel skips
// every other tile), with T5's learned relative-position bias (the model has no other
// positions until a state-space model supplies them). A BST layer first runs a state-space model over the whole sequence
// (down-projected to the SSM's width), turns its outputs into context states, and
// cross-attends from each block, with a second query projection, to its block's states:
//   - SH: one filter; the states at the block's own positions, masked causally;
//   - MH: one output matrix per head (sharing A and dt); head h reads its own, masked as SH;
//   - MF: S filters read at the previous block's last token, plus learned context ids; block
//     0 reads a learned initial context; unmasked.
// The two attentions' heads are concatenated and projected back to d_model. Both attentions
// go through the engine (attn::attend). Pre-norm by default: x + Attn(LN x), then
// x + FFN(LN x).
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>

#include <cstdint>
#include <string>

#include "strata/attn/attention_call.h"
#include "strata/nn/adaptable_linear.h"
#include "strata/nn/state_space.h"

namespace strata::nn {

enum class ContextStates { SH, MH, MF };
// "sh", "mh", "mf"; strata::Error naming the known ones otherwise.
ContextStates context_states_from_name(const std::string& name);

struct BlockStateOptions {
  std::int64_t d_model = 256, heads = 4, d_ff = 1024;
  std::int64_t window = 64;  // W: tokens a block
  double dropout = 0.1;      // residual branches
  std::string activation = "relu";
  bool pre_norm = true;
  attn::Kernel kernel = attn::Kernel::Fused;
  bool block_state = true;   // false: a SLIDE layer (no SSM, no cross-attention)
  ContextStates context = ContextStates::SH;
  std::int64_t filters = 32;  // MF: S context states a block
  StateSpaceOptions ssm;      // channels: the SSM's width; outputs set from `context`
};

class BlockStateLayerImpl : public torch::nn::Module {
 public:
  explicit BlockStateLayerImpl(const BlockStateOptions& options);
  // x [B, L, d_model] -> [B, L, d_model]. Causal: position t reads positions <= t only.
  at::Tensor forward(const at::Tensor& x);

  // Self-attention (SLIDE) and the output projection, in every layer; relation_bias is the
  // T5 bucket bias table [heads, buckets].
  AdaptableLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};
  at::Tensor relation_bias;
  // BST layers only: the SSM's input map, the second queries, and how context states become
  // keys and values. SH, MH: key_lift and value_lift [O, C, d_model / O] map filter o's
  // outputs to head group o (O = 1 for SH, heads for MH: head h reads its own filter). MF:
  // lift [C, d_model], plus context ids, then context_k / context_v.
  AdaptableLinear ssm_in{nullptr}, context_q{nullptr}, context_k{nullptr}, context_v{nullptr};
  StateSpace ssm{nullptr};
  at::Tensor key_lift, value_lift, lift;
  at::Tensor context_ids;      // MF: [S, d_model]
  at::Tensor initial_context;  // MF: [S, d_model], block 0's states
  torch::nn::LayerNorm attention_norm{nullptr}, final_norm{nullptr};
  AdaptableLinear fc1{nullptr}, fc2{nullptr};

  const BlockStateOptions& options() const { return options_; }

 private:
  at::Tensor attention(const at::Tensor& h);  // normed [B, L, D] -> out_proj of the heads
  at::Tensor cross_attention(const at::Tensor& h);  // normed [B, L, D] -> [B, H, L, D / H]

  BlockStateOptions options_;
};
TORCH_MODULE(BlockStateLayer);

}  // namespace strata::nn
