#include "strata/nn/transformer_stack.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/nn/hibrids_decoder_bias.h"
#include "strata/nn/prefix_tuning.h"
#include "strata/nn/dropout.h"

namespace strata::nn {

namespace {

// Token + position (+ token type) embeddings at positions [offset, offset + L), or at
// `row_positions` [B, L] when given, with the embedding norm (post-norm only) and dropout.
at::Tensor embed(const at::Tensor& ids, std::int64_t offset, torch::nn::Embedding& tokens,
                 torch::nn::Embedding& positions, Norm& norm, const StackOptions& options, bool training,
                 torch::nn::Embedding types = nullptr, const at::Tensor& type_ids = {},
                 const at::Tensor& row_positions = {}) {
  const std::int64_t length = ids.size(1);
  if (positions && offset + length > options.max_positions)
    throw Error("input of " + std::to_string(offset + length) + " positions exceeds the model's " +
                "max_positions " + std::to_string(options.max_positions));
  at::Tensor x = tokens(ids);
  if (options.embedding_scale != 1.0) x = x * options.embedding_scale;
  if (positions && row_positions.defined()) {
    x = x + positions(row_positions + options.position_offset);
  } else if (positions) {
    const std::int64_t first = offset + options.position_offset;
    const at::Tensor position_ids =
        torch::arange(first, first + length, torch::TensorOptions().dtype(torch::kInt64).device(ids.device()));
    x = x + positions(position_ids).unsqueeze(0);
  }
  if (types) x = x + types(type_ids.defined() ? type_ids : torch::zeros_like(ids));
  if (norm) x = norm(x);
  return nn::dropout(x, options.layer.dropout, training);
}

// Registers the shared pieces of both stacks.
template <class Stack>
void register_common(Stack& stack, const StackOptions& options, torch::nn::Embedding tokens) {
  const std::int64_t d = options.layer.attention.d_model;
  stack.embed_tokens = tokens;  // owned (and named) by the model, not registered here
  if (options.learned_positions)
    stack.embed_positions = stack.register_module(
        "embed_positions", torch::nn::Embedding(options.max_positions + options.position_offset, d));
  if (options.layer.pre_norm) {
    stack.layer_norm = stack.register_module("layer_norm", block_norm(options.layer));
  } else {
    stack.layernorm_embedding = stack.register_module("layernorm_embedding", block_norm(options.layer));
  }
  stack.layers = stack.register_module("layers", torch::nn::ModuleList());
}

// Layer i's options; with a shared relation table, layers after the first borrow layer 0's.
template <class Layer>
LayerOptions options_of_layer(const StackOptions& options, std::int64_t i, torch::nn::ModuleList& layers) {
  LayerOptions layer = options.layer_options(i);
  if (options.share_relation_bias && i > 0)
    layer.attention.shared_relation_bias = layers[0]->as<Layer>()->self_attn->relation_bias;
  return layer;
}

}  // namespace

LayerOptions StackOptions::layer_options(std::int64_t i) const {
  LayerOptions options = layer;
  if (!self_specs.empty()) options.attention.spec = self_specs.at(static_cast<std::size_t>(i));
  if (!cross_specs.empty()) options.cross_spec = cross_specs.at(static_cast<std::size_t>(i));
  if (!pal_specs.empty()) options.pal.spec = pal_specs.at(static_cast<std::size_t>(i));
  return options;
}

TransformerEncoderImpl::TransformerEncoderImpl(const StackOptions& options,
                                               torch::nn::Embedding tokens)
    : options_(options) {
  register_common(*this, options, std::move(tokens));
  if (options.token_types > 0)
    embed_token_types = register_module(
        "embed_token_types", torch::nn::Embedding(options.token_types, options.layer.attention.d_model));
  for (std::int64_t i = 0; i < options.layers; ++i)
    layers->push_back(EncoderLayer(options_of_layer<EncoderLayerImpl>(options, i, layers)));
}

at::Tensor TransformerEncoderImpl::forward(const at::Tensor& ids, const at::Tensor& padding,
                                           const attn::TokenLayout* layout, const LayerPrefixes* prefixes,
                                           const StackConditioning* conditioning,
                                           const at::Tensor& token_types) {
  if (prefixes && prefixes->size() != layers->size())
    throw Error("encoder: " + std::to_string(prefixes->size()) + " layers of prefixes for " +
                std::to_string(layers->size()) + " layers");
  if (conditioning && !conditioning->layers.empty() && conditioning->layers.size() != layers->size())
    throw Error("encoder: " + std::to_string(conditioning->layers.size()) + " layers of conditioning for " +
                std::to_string(layers->size()) + " layers");
  if (token_types.defined() && !embed_token_types)
    throw Error("encoder: token types given, but the model has no token-type embeddings (model.token_types = 0)");
  at::Tensor x = embed(ids, 0, embed_tokens, embed_positions, layernorm_embedding, options_, is_training(),
                       embed_token_types, token_types);
  if (conditioning && conditioning->after_embedding) x = conditioning->after_embedding(x);
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const PrefixKv* prefix = prefixes && (*prefixes)[i] ? &*(*prefixes)[i] : nullptr;
    const LayerConditioning* layer =
        conditioning && !conditioning->layers.empty() ? &conditioning->layers[i] : nullptr;
    x = layers[i]->as<EncoderLayer>()->forward(x, padding, layout, prefix, layer);
  }
  return layer_norm ? layer_norm(x) : x;
}

TransformerDecoderImpl::TransformerDecoderImpl(const StackOptions& options,
                                               torch::nn::Embedding tokens, bool cross_attention)
    : options_(options) {
  register_common(*this, options, std::move(tokens));
  for (std::int64_t i = 0; i < options.layers; ++i)
    layers->push_back(DecoderLayer(options_of_layer<DecoderLayerImpl>(options, i, layers), cross_attention));
  if (options.hibrids.kind != attn::RelationKind::None) {
    if (!cross_attention || options.layers < 2)
      throw Error("HIBRIDS-DEC needs cross-attention and at least 2 decoder layers");
    hibrids_bias = register_parameter(
        "hibrids_bias", torch::zeros({options.layer.attention.heads, attn::relation_count(options.hibrids)}));
  }
}

at::Tensor TransformerDecoderImpl::forward(const at::Tensor& ids, const at::Tensor& padding,
                                           const at::Tensor& memory,
                                           const at::Tensor& memory_padding, KvCache* cache,
                                           const attn::TokenLayout* memory_layout,
                                           const PrefixStates* prefixes, const at::Tensor& query_padding,
                                           const attn::TokenLayout* self_layout,
                                           const attn::TokenLayout* self_query_layout) {
  if (prefixes && (prefixes->decoder.size() != layers->size() || prefixes->cross.size() != layers->size()))
    throw Error("decoder: prefixes for " + std::to_string(prefixes->decoder.size()) + " and " +
                std::to_string(prefixes->cross.size()) + " layers, the stack has " + std::to_string(layers->size()));
  if (cache && cache->layers.size() != layers->size())
    cache->layers.resize(layers->size());
  const std::int64_t offset = cache ? cache->length : 0;
  // With a cache and padding (left-padded prompts), the keys are every cached position and
  // these, with their padding, and each row's positions count its real tokens.
  at::Tensor key_padding = padding, row_positions;
  if (cache && (padding.defined() || cache->key_padding.defined())) {
    const auto real = [&](std::int64_t n) {
      return torch::ones({ids.size(0), n}, torch::TensorOptions().dtype(torch::kBool).device(ids.device()));
    };
    key_padding = torch::cat({cache->key_padding.defined() ? cache->key_padding : real(offset),
                              padding.defined() ? padding.to(torch::kBool) : real(ids.size(1))},
                             1);
    row_positions = (key_padding.to(torch::kInt64).cumsum(1) - 1).clamp_min(0).narrow(1, offset, ids.size(1));
  }
  at::Tensor x = embed(ids, offset, embed_tokens, embed_positions, layernorm_embedding, options_, is_training(),
                       nullptr, {}, row_positions);
  const auto count = static_cast<std::int64_t>(layers->size());
  std::optional<attn::TokenLayout> queries;  // the new positions' segments, under prefix blocking
  if (options_.query_blocks > 1) {
    if (self_layout) throw Error("decoder: prefix blocking derives the queries' segments; it takes no self layout");
    queries.emplace();
    queries->segment = decoder_segments(ids.size(0), offset, ids.size(1), options_.segment_length,
                                                options_.query_blocks).to(ids.device());
  }
  at::Tensor alignment;  // HIBRIDS-DEC: the second-last layer's cross-attention weights
  // The layer's prefix of `family`, or null.
  auto prefix_of = [&](const LayerPrefixes& family, std::int64_t i) -> const PrefixKv* {
    const auto& p = family[static_cast<std::size_t>(i)];
    return p ? &*p : nullptr;
  };
  for (std::int64_t i = 0; i < count; ++i) {
    AttentionExtras self{.layout = self_layout,
                         .query_layout = queries ? &*queries : self_query_layout ? self_query_layout : self_layout};
    AttentionExtras cross{.layout = memory_layout, .query_padding = query_padding};
    if (prefixes) {
      self.prefix = prefix_of(prefixes->decoder, i);
      cross.prefix = prefix_of(prefixes->cross, i);
    }
    if (hibrids_bias.defined() && i == count - 2) cross.weights = &alignment;
    if (hibrids_bias.defined() && i == count - 1) {
      if (memory_layout == nullptr) throw Error("HIBRIDS-DEC needs the source layout");
      cross.bias = hibrids_decoder_bias(alignment, *memory_layout, hibrids_bias, options_.hibrids);
    }
    x = layers[i]->as<DecoderLayer>()->forward(x, key_padding, memory, memory_padding,
                                               cache ? &cache->layers[i] : nullptr, self, cross);
  }
  if (cache) {
    cache->length += ids.size(1);
    if (row_positions.defined()) cache->key_padding = key_padding;
  }
  return layer_norm ? layer_norm(x) : x;
}

}  // namespace strata::nn
