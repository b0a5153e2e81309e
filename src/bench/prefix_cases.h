#pragma once
// The cases of `strata bench prefix` (prefix_suite.h), each a recipe compiled at the
// benchmark's sizes, and the prefix-tuned encoder a case's child times.
#include <ATen/core/Tensor.h>
#include <torch/nn/modules/embedding.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/bench/prefix_suite.h"
#include "strata/models/model_config.h"
#include "strata/nn/transformer_stack.h"

namespace strata::bench {

inline constexpr const char* kPrefixReference = "prefix_tune";

struct PrefixCase {
  std::string name, recipe, label;
  models::ModelConfig model;      // the recipe at the benchmark's sizes, designs compiled
  std::int64_t prefix = 0;        // P of every layer that has prefixes; 0: none
  std::int64_t blocks = 1;        // K: input segments and prefix groups (1: not blocked)
  std::vector<attn::LayerSpec> specs;  // each encoder layer's
  std::vector<bool> with_prefix;       // each encoder layer's
  std::vector<std::string> kinds;      // each encoder layer's kind (layer_kind)
};

// Every case, Prefix-tune among them, in the order of the printout.
std::vector<PrefixCase> prefix_cases(const PrefixBenchOptions& o);

// A layer's kind, from its spec: "plain" (with prefixes), "plain_no_prefix", or its prefix
// design's parts joined by '+': "prefix_block", "top_p", "gumbel", "prefix_block+gumbel".
std::string layer_kind(const attn::LayerSpec& spec, bool prefix);

// One kind of layer, as the first case that uses it runs it.
struct LayerKind {
  std::string name;
  attn::LayerSpec spec;
  std::int64_t prefix = 0, blocks = 1;
};

// Every kind the cases use, in the order they first appear.
std::vector<LayerKind> layer_kinds(const std::vector<PrefixCase>& cases);

// A case's encoder, frozen, with trainable prefixes: the same weights in every case and process.
struct PrefixedEncoder {
  attn::TokenLayout tokens;  // segment [1, L] when blocked: the one field prefix_block reads
  torch::nn::Embedding embed{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  at::Tensor ids, padding;
  std::vector<at::Tensor> prefixes;  // k, v of every layer: the trained parameters
  nn::LayerPrefixes layer_prefixes;  // what each layer's attention gets (the same tensors)

  // Forward (training mode) + backward of sum(hidden^2) down to the prefixes.
  void step();
};

std::shared_ptr<PrefixedEncoder> build_encoder(const PrefixCase& c, const PrefixBenchOptions& o);

}  // namespace strata::bench
