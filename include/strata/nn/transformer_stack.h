#pragma once
// Encoder and decoder stacks: token embeddings (shared, owned by the model) plus learned
// positions (or none, when a relative-position bias takes their place: T5), then the layers.
// One extra norm per stack: on the embeddings for post-norm (BART's layernorm_embedding), on
// the output for pre-norm (GPT-2's final norm, here layer_norm), so both variants train stably.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>

#include <functional>
#include <vector>

#include "strata/nn/kv_cache.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/transformer_layers.h"

namespace strata::nn {

struct StackOptions {
  LayerOptions layer;
  std::int64_t layers = 3;
  std::int64_t max_positions = 1024;
  bool learned_positions = true;     // false: no position table (T5's relative bias instead)
  std::int64_t position_offset = 0;  // position p reads row p + offset of the table (BART: 2)
  double embedding_scale = 1.0;      // token embeddings times this (BART's scale_embedding: sqrt(d))
  std::int64_t token_types = 0;      // encoder: a segment-type table of this many rows (BERT); 0 = none
  // T5: layers after the first use the first layer's self-attention relation table.
  bool share_relation_bias = false;
  // Per-layer attention specs (empty = every layer takes layer.attention.spec / cross_spec /
  // layer.pal.spec). pal_specs: the encoder layers' PAL heads (when layer.pal.size > 0).
  std::vector<attn::LayerSpec> self_specs, cross_specs, pal_specs;
  // Decoder: HIBRIDS-DEC's tree relation (kind None = off); needs 2 layers and cross-attention.
  attn::Relation hibrids;
  // Decoder: position t's segment is min(t / segment_length, query_blocks - 1), the query
  // segment a prefix_block mask reads (seed 000's output segments); 1 block = none.
  std::int64_t query_blocks = 1, segment_length = 1;

  LayerOptions layer_options(std::int64_t i) const;
};

// What a conditioned model changes in an encoder stack (CA-MTL: its conditional alignment
// after the embeddings, and per layer what LayerConditioning says); every part optional.
struct StackConditioning {
  std::function<at::Tensor(const at::Tensor&)> after_embedding;  // [B, L, d] -> [B, L, d]
  std::vector<LayerConditioning> layers;                         // empty, or one per layer
};

class TransformerEncoderImpl : public torch::nn::Module {
 public:
  TransformerEncoderImpl(const StackOptions& options, torch::nn::Embedding embed_tokens);
  // ids, padding: [B, L] (padding true = real token). layout: the tokens' layout, needed by
  // structured specs that read it. prefixes: each layer's prefix keys and values (one entry
  // per layer, nullopt for none), or null. conditioning: or null. token_types: [B, L] int64
  // segment types (with options.token_types; undefined = all 0). Returns [B, L, d].
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& padding,
                     const attn::TokenLayout* layout = nullptr, const LayerPrefixes* prefixes = nullptr,
                     const StackConditioning* conditioning = nullptr, const at::Tensor& token_types = {});

  torch::nn::Embedding embed_tokens{nullptr}, embed_positions{nullptr}, embed_token_types{nullptr};
  Norm layernorm_embedding{nullptr}, layer_norm{nullptr};
  torch::nn::ModuleList layers{nullptr};

 private:
  StackOptions options_;
};
TORCH_MODULE(TransformerEncoder);

class TransformerDecoderImpl : public torch::nn::Module {
 public:
  TransformerDecoderImpl(const StackOptions& options, torch::nn::Embedding embed_tokens,
                         bool cross_attention);
  // ids: [B, T] (the new tokens only when a cache holds the earlier ones; positions continue
  // from cache->length, which this call advances). padding: [B, T] or undefined.
  // memory / memory_padding: encoder output and padding, undefined without cross-attention.
  // memory_layout: the source's layout (cross-attention specs, HIBRIDS-DEC). prefixes: the
  // decoder's and cross-attention's prefix keys and values per layer, or null.
  // query_padding: [B, T] true = a real position, what cross-attention's top-p key impact
  // counts (undefined = every position). self_layout: the layout of self-attention's keys (with
  // a cache, the cached positions' and these), for a decoder_attention spec that reads one;
  // self_query_layout: these positions' (null: self_layout, as without a cache). Returns
  // [B, T, d].
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& padding, const at::Tensor& memory,
                     const at::Tensor& memory_padding, KvCache* cache = nullptr,
                     const attn::TokenLayout* memory_layout = nullptr, const PrefixStates* prefixes = nullptr,
                     const at::Tensor& query_padding = {}, const attn::TokenLayout* self_layout = nullptr,
                     const attn::TokenLayout* self_query_layout = nullptr);

  std::int64_t num_layers() const { return options_.layers; }
  const StackOptions& options() const { return options_; }

  torch::nn::Embedding embed_tokens{nullptr}, embed_positions{nullptr};
  Norm layernorm_embedding{nullptr}, layer_norm{nullptr};
  torch::nn::ModuleList layers{nullptr};
  at::Tensor hibrids_bias;  // [H, relation_count(options.hibrids)], HIBRIDS-DEC's table

 private:
  StackOptions options_;
};
TORCH_MODULE(TransformerDecoder);

}  // namespace strata::nn
