#pragma once
// HIERENC's section encoder (seed 001 §5.2's structure-aware comparison: the hierarchical model
// of Rohde et al. 2021 with a section encoder in place of their sentence encoder). After the
// token encoder, each section's token states are mean-pooled into one vector and Transformer
// encoder layers run over a document's sections (dense attention among the sections that have
// tokens; with a tree relation, HIBRIDS biases that attention by each pair of sections'
// relation, seed 001 Table 5). The seq2seq model appends the section states to the token states its decoder
// cross-attends to (model.section_encoder_layers).
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>

#include "strata/attn/token_layout.h"
#include "strata/nn/transformer_layers.h"

namespace strata::models {

struct SectionStates {
  at::Tensor hidden;   // [B, S, d]: one vector per section of the layout's tree
  at::Tensor present;  // [B, S] bool: sections with at least one real token
};

// Mean of the token states of each section: hidden [B, L, d], padding [B, L] (true = real
// token), section [B, L] integer (each token's section, < sections).
SectionStates pool_sections(const at::Tensor& hidden, const at::Tensor& padding, const at::Tensor& section,
                            std::int64_t sections);

class SectionEncoderImpl : public torch::nn::Module {
 public:
  // `layer`: the options of every layer (their self-attention is dense whatever it says);
  // a final norm when the layers are pre-norm, as the token encoder has. `hibrids`: a tree
  // relation biasing the sections' attention (kind None = off).
  SectionEncoderImpl(nn::LayerOptions layer, std::int64_t layers, const attn::Relation& hibrids = {});
  // The pooled sections through the layers; absent sections are masked and come out zero.
  // `layout`: the tokens' layout; its section ids index the sections, and its tree
  // (path_len, lvl_diff, section_depth) gives their relations when HIBRIDS is on.
  SectionStates forward(const at::Tensor& hidden, const at::Tensor& padding, const attn::TokenLayout& layout,
                        std::int64_t sections);

  torch::nn::ModuleList layers{nullptr};
  nn::Norm layer_norm{nullptr};  // pre-norm only

 private:
  bool hibrids_ = false;
};
TORCH_MODULE(SectionEncoder);

}  // namespace strata::models
