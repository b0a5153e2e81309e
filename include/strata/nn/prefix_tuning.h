#pragma once
// Prefix-tuning (Li & Liang 2021; seed 000 §3): P learned keys and values before the keys of
// a layer's attention. Each family (encoder self-attention, decoder self-attention,
// cross-attention) is reparameterised by an MLP, as Li & Liang found direct optimisation
// unstable: embedding [P, d] -> Linear(d, hidden) -> tanh -> Linear(hidden, 2 * n * d) for
// its n prefixed layers. After tuning only the MLP's outputs matter: PrefixStates is what a
// prefix file holds and what the attention modules receive.
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/nn/multi_head_attention.h"

namespace strata::nn {

// Each prefix slot's group when P slots are split evenly into `blocks` groups: slot n is in
// group n * blocks / P. [P] int32.
at::Tensor prefix_groups(std::int64_t prefix_length, std::int64_t blocks);

// The encoder's query segments: each item's real tokens split evenly into `blocks` segments
// (token i of n is in segment i * blocks / n). A document shorter than `blocks` tokens leaves
// some segments, and so their prefix groups, without queries: that is the fallback, never an
// error. padding: [B, L] bool (true = real) or undefined (every token real). [B, L] int32;
// padding positions take the last segment.
at::Tensor encoder_segments(const at::Tensor& padding, std::int64_t length, std::int64_t blocks);

// The decoder's query segments for positions [offset, offset + length): position t is in
// segment min(t / segment_length, blocks - 1), so cached decoding sees what training saw.
// [batch, length] int32.
at::Tensor decoder_segments(std::int64_t batch, std::int64_t offset, std::int64_t length,
                            std::int64_t segment_length, std::int64_t blocks);

// One family's keys and values per layer of its stack; nullopt where a layer has none.
using LayerPrefixes = std::vector<std::optional<PrefixKv>>;
struct PrefixStates {
  LayerPrefixes encoder, decoder, cross;
};

struct PrefixOptions {
  std::int64_t length = 0;  // P
  std::int64_t hidden = 512;
  std::int64_t d_model = 256, heads = 4;
  std::vector<bool> encoder_layers, decoder_layers;  // which layers of each stack have prefixes
  // Each slot's group for prefix_block, [P] int32 (undefined when a stack does not block).
  at::Tensor encoder_groups, decoder_groups;
};

// One family: P embeddings through the MLP to [n, 2, H, P, Dh] for its n prefixed layers.
class PrefixMlpImpl : public torch::nn::Module {
 public:
  PrefixMlpImpl(std::int64_t length, std::int64_t hidden, std::int64_t d_model, std::int64_t layers);
  at::Tensor forward();  // [layers, 2, P, d]

  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};

 private:
  std::int64_t length_, d_model_, layers_;
};
TORCH_MODULE(PrefixMlp);

// The three families. Parameter names: {encoder,decoder,cross}.{embedding,fc1,fc2}.
class PrefixTuningImpl : public torch::nn::Module {
 public:
  explicit PrefixTuningImpl(PrefixOptions options);
  // The keys and values of every prefixed layer, [1, H, P, Dh] each, differentiable.
  PrefixStates forward();

  PrefixMlp encoder{nullptr}, decoder{nullptr}, cross{nullptr};

 private:
  PrefixOptions options_;
};
TORCH_MODULE(PrefixTuning);

}  // namespace strata::nn
