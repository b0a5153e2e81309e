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
// A Block-Recurrent layer (Hutchins et al. 2022, Table 5.1's BRecT:FIXED:SKIP, Meliad's
// recurrent layer) has the same token side with context = recurrent: block k cross-attends,
// unmasked, to S state vectors, which then move on, sequentially, block by block: they attend
// to themselves and to blocks k - 1 and k (the tokens' own keys), the two results are
// concatenated and projected, and a fixed gate g = sigmoid(b) keeps g of the old state
// (S' = g S + (1 - g) update; "skip": no feed-forward after). No SSM.
// With xl_memory the previous block is a Transformer-XL cache instead (Table 5.1's baseline):
// the same values, no gradient through it. The two attentions' heads are concatenated and projected back to d_model. Both attentions
// go through the engine (attn::attend). Pre-norm by default: x + Attn(LN x), then
// x + FFN(LN x).
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/normalization.h>

#include <cstdint>
#include <string>

#include "strata/attn/attention_call.h"
#include "strata/nn/adaptable_linear.h"
#include "strata/nn/kv_cache.h"
#include "strata/nn/state_space.h"

namespace strata::nn {

enum class ContextStates { SH, MH, MF, Recurrent };
// "sh", "mh", "mf", "recurrent"; strata::Error naming the known ones otherwise.
ContextStates context_states_from_name(const std::string& name);

struct BlockStateOptions {
  std::int64_t d_model = 256, heads = 4, d_ff = 1024;
  std::int64_t window = 64;  // W: tokens a block
  // The block before as a Transformer-XL cache: its keys and values are projected from the
  // detached input, so no gradient reaches the earlier block through them (the forward pass
  // is SLIDE's). false: SLIDE, trained through both blocks.
  bool xl_memory = false;
  double dropout = 0.1;      // residual branches
  std::string activation = "relu";
  bool pre_norm = true;
  attn::Kernel kernel = attn::Kernel::Fused;
  bool block_state = true;   // false: a SLIDE layer (no SSM, no cross-attention)
  ContextStates context = ContextStates::SH;
  std::int64_t filters = 32;  // MF: S context states a block; recurrent: S state vectors
  StateSpaceOptions ssm;      // channels: the SSM's width; outputs set from `context`
};

class BlockStateLayerImpl : public torch::nn::Module {
 public:
  explicit BlockStateLayerImpl(const BlockStateOptions& options);
  // x [B, L, d_model] -> [B, L, d_model]. Causal: position t reads positions <= t only.
  // Decoding: with a cache, x holds positions offset .. offset + L - 1 and the cache summarises
  // the ones before (empty at offset 0); it is advanced past them.
  at::Tensor forward(const at::Tensor& x, LayerKvCache* cache = nullptr, std::int64_t offset = 0);
  // forward(x), for training at lengths whose graph would not fit in memory: the SSM's input is
  // made `span` tokens at a time and the SSM runs once over the whole sequence; then attention
  // and feed-forward run a span at a time (each span's queries reading the block before it, as
  // decoding does). Each span's graph is dropped and made again in backward (nn/recompute.h):
  // kept are x, u [B, L, C] and the states. Pre-norm SLIDE, SH and MH layers; span a multiple
  // of W. strata::Error otherwise.
  at::Tensor forward_recomputed(const at::Tensor& x, std::int64_t span);

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
  at::Tensor initial_context;  // MF and recurrent: [S, d_model], block 0's states
  // Recurrent: the state's pre-attention norm, learned slot positions [S, d_model], its
  // queries (for itself and for the tokens), keys and values (read by itself and by the
  // tokens' second queries), the projection of the two attentions, and the gate's bias [D].
  torch::nn::LayerNorm state_norm{nullptr};
  at::Tensor state_positions, gate_bias;
  AdaptableLinear state_q{nullptr}, state_q2{nullptr}, state_k{nullptr}, state_v{nullptr};
  torch::nn::Linear state_out{nullptr};
  torch::nn::LayerNorm attention_norm{nullptr}, final_norm{nullptr};
  AdaptableLinear fc1{nullptr}, fc2{nullptr};

  const BlockStateOptions& options() const { return options_; }

 private:
  void check_input(const at::Tensor& x) const;
  // forward() given the context states of x's positions (undefined: computed here)
  at::Tensor forward_part(const at::Tensor& x, LayerKvCache* cache, std::int64_t offset, const at::Tensor& states);
  // normed [B, L, D] -> out_proj of the heads
  at::Tensor attention(const at::Tensor& h, LayerKvCache* cache, std::int64_t offset, const at::Tensor& states);
  // normed [B, L, D] -> [B, H, L, D / H]: SLIDE's pairs, the previous block without gradient
  at::Tensor xl_attention(const at::Tensor& h);
  // normed [B, L, D] -> [B, H, L, D / H]; the SSM's states [B, O, C, L] unless given
  at::Tensor cross_attention(const at::Tensor& h, LayerKvCache* cache, std::int64_t offset,
                             const at::Tensor& given_states);
  // normed [B, L, D] and the tokens' keys and values [B, H, L, D / H] -> [B, H, L, D / H]
  at::Tensor recurrent_attention(const at::Tensor& h, const at::Tensor& k, const at::Tensor& v);

  BlockStateOptions options_;
};
TORCH_MODULE(BlockStateLayer);

}  // namespace strata::nn
