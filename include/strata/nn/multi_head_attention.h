#pragma once
// Multi-head attention with separate query/key/value/output projections (HF BART's names,
// so pretrained weights load by name). The scaled dot product itself goes to the attention
// engine (attn::attend) with the kernel the model's config names and the layer's spec; a
// spec with a relation gives the module a learned table `relation_bias` [H, relation_count],
// initialised at zero (HIBRIDS, TOKBIAS, SECBIAS).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>

#include "strata/attn/attention_call.h"
#include "strata/nn/adaptable_linear.h"
#include "strata/nn/kv_cache.h"

namespace strata::attn {
struct KeptCall;
}

namespace strata::nn {

// Extra keys and values placed before the keys proper (prefix-tuning's hook): [1 or B, H,
// P, Dh] each, visible to every query unless the layer's spec blocks them. segment [P] int32:
// each slot's group, read by the prefix_block mask (seed 000 §4.1); may be undefined when
// the spec does not block.
struct PrefixKv {
  at::Tensor k, v;
  at::Tensor segment;
};

struct AttentionOptions {
  std::int64_t d_model = 256;
  std::int64_t heads = 4;
  double dropout = 0.0;  // on attention probabilities
  attn::Kernel kernel = attn::Kernel::Fused;
  attn::LayerSpec spec;  // plain by default
  bool bias = true;      // biases in the projections (T5 has none)
  // Scores scaled by 1 / sqrt(head dim); false for T5, whose initialisation folds it in.
  bool scale = true;
  // Longformer / LED: the global tokens' queries (the first N tokens, N = the spec's global(N))
  // attend to every key through their own projections query_global, key_global and
  // value_global; the other queries use q_proj, k_proj and v_proj as usual. Padded queries
  // get a zero attention output, as Longformer gives them.
  bool global_projections = false;
  // A relation bias table owned by another layer (T5: block 0's, shared by the stack); this
  // module then uses it and registers none of its own. Undefined = its own table.
  at::Tensor shared_relation_bias;
};

// What a call reads besides hidden states, all optional: the keys' layout (self-attention:
// the tokens of x, with a cache the cached ones too; cross-attention: the memory's), the
// queries' layout when it is not the keys' (a decoder's new positions, whose segment a
// prefix_block or query_segment mask reads), the layer's prefix keys and values
// (prefix-tuning: the model passes them on every call, the module keeps none), which queries
// are real in cross-attention ([B, Lq] bool; in self-attention the key padding says), a dense
// bias [B or 1, H or 1, Lq, Lk] added to the scores, and where to put the attention weights
// [B, H, Lq, Lk] over the keys proper (computed by the dense reference kernel; HIBRIDS-DEC
// reads them).
struct AttentionExtras {
  const attn::TokenLayout* layout = nullptr;
  const attn::TokenLayout* query_layout = nullptr;
  const PrefixKv* prefix = nullptr;
  at::Tensor query_padding{};
  at::Tensor bias{};
  at::Tensor* weights = nullptr;
};

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  explicit MultiHeadAttentionImpl(const AttentionOptions& options);

  // x: [B, L, d]. key_padding: [B, L] bool (true = real) or undefined; with a cache it covers
  // the cached keys and this call's. With a cache, this call's keys and values are appended to
  // the cached ones and queries attend to all.
  // Structured specs read extras.query_layout (these queries) and extras.layout (every key,
  // with a cache the cached ones and this call's); without a cache one layout serves both.
  at::Tensor self_attention(const at::Tensor& x, const at::Tensor& key_padding, bool causal,
                            LayerKvCache* cache = nullptr, const AttentionExtras& extras = {});
  // x: [B, Lq, d] attends to memory [B, Lm, d]. With a cache, the memory's keys and values
  // are computed on the first call and reused after.
  at::Tensor cross_attention(const at::Tensor& x, const at::Tensor& memory,
                             const at::Tensor& memory_padding, LayerKvCache* cache = nullptr,
                             const AttentionExtras& extras = {});

  const attn::LayerSpec& spec() const { return options_.spec; }
  std::int64_t heads() const { return options_.heads; }

  // For analyses of heads (seed 003 §3.1). A gate [H] multiplies each head's output before
  // out_proj: the gradient of the loss with respect to a gate of ones is Michel et al.'s head
  // importance, and a zero prunes the head. Undefined = no gate.
  void set_head_gate(at::Tensor gate) { head_gate_ = std::move(gate); }
  // While recording, each call keeps its attention weights over the prefix slots then the
  // keys proper, [B, H, Lq, P + Lk] (detached; computed by the dense reference kernel, so
  // B × H × Lq × (P + Lk) memory).
  void record_weights(bool on) {
    record_ = on;
    recorded_ = at::Tensor();
    recorded_prefix_ = 0;
  }
  const at::Tensor& recorded_weights() const { return recorded_; }
  std::int64_t recorded_prefix_len() const { return recorded_prefix_; }  // P of the last recorded call
  // While keeping, each call of a batch of one keeps what it read (attn/kept_call.h: its
  // queries and keys, layouts, spec and biases; no weights), so that its weights can be
  // recomputed later a band of queries at a time. Null before any call.
  void keep_calls(bool on) {
    keep_ = on;
    kept_.reset();
  }
  const std::shared_ptr<const attn::KeptCall>& kept_call() const { return kept_; }

  AdaptableLinear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, out_proj{nullptr};
  AdaptableLinear query_global{nullptr}, key_global{nullptr}, value_global{nullptr};  // with global_projections
  // [H, relation_count(spec.bias)], undefined without a relation; the shared table when
  // options.shared_relation_bias is given (then not registered here).
  at::Tensor relation_bias;

 private:
  at::Tensor split_heads(const at::Tensor& x) const;  // [B, L, d] -> [B, H, L, Dh]
  // projection(x) as heads [B, H, L, Dh], ready for the engine's 1 / sqrt(Dh) scaling.
  at::Tensor queries(AdaptableLinear& projection, const at::Tensor& x);
  // The heads [B, H, Lq, Dh] gated and projected back to [B, Lq, d].
  at::Tensor project_out(const at::Tensor& heads, const at::Tensor& x);
  // Longformer's global rows: the first `count` queries of x attend to every real key through
  // the global projections, replacing those rows of `heads`.
  at::Tensor with_global_rows(const at::Tensor& x, const at::Tensor& heads, const at::Tensor& key_padding,
                              std::int64_t count);
  // query_padding: [B, Lq] true = real query, or undefined (attn::AttentionCall). Returns the
  // heads [B, H, Lq, Dh].
  at::Tensor attend(const at::Tensor& x, at::Tensor k, at::Tensor v, const at::Tensor& key_padding,
                    const at::Tensor& query_padding, bool causal, std::int64_t query_offset,
                    const attn::TokenLayout* query_layout,
                    const AttentionExtras& extras);

  AttentionOptions options_;
  at::Tensor head_gate_;
  bool record_ = false;
  at::Tensor recorded_;
  bool keep_ = false;
  std::shared_ptr<const attn::KeptCall> kept_;
  std::int64_t recorded_prefix_ = 0;
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace strata::nn
