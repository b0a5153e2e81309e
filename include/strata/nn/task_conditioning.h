#pragma once
// CA-MTL's conditional modules (thesis ch. 3, Definition 1): each turns a task embedding z
// [B, dz] (one per batch row) into a change of the encoder, through FiLM, φ(x | z) =
// (1 + γ(z)) ⊙ x + β(z). The generators are zero-initialised, so FiLM, the attention bias and
// the LayerNorm start as the identity and leave a pretrained encoder's function unchanged
// when multi-task training begins (the thesis's reason for 1 + γ); the bottleneck, a rank
// d/3 map that replaces the top layer's feed-forward output, does not.
//   Film                       the generator itself
//   ConditionalAttentionBias   M(z) = diag(A'_1 .. A'_N), A'_n = A_n (1 + γ(z)) + β(z): a soft
//                              block-diagonal bias over the L × L scores (the public code's
//                              form: A = W0 [L, s] rows cut into N blocks of s = ⌈L/N⌉, γ and
//                              β in R^s broadcast over rows, zeros off the blocks)
//   ConditionalLayerNorm       the LayerNorm weight (1 + γ(z)) ⊙ w + β(z), its bias unchanged
//   ConditionalBottleneck      Up(Down(FiLM(h | z))), d -> d/3 -> d, no activation between
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace strata::nn {

class FilmImpl : public torch::nn::Module {
 public:
  FilmImpl(std::int64_t condition_dim, std::int64_t features);
  // γ and β for each row of z [B, dz]: [B, features] each.
  std::pair<at::Tensor, at::Tensor> generate(const at::Tensor& z);
  // (1 + γ) ⊙ x + β, x [B, ..., features] (γ and β broadcast over the middle dimensions).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& z);

  torch::nn::Linear generator{nullptr};  // dz -> 2 * features, zero-initialised

 private:
  std::int64_t features_;
};
TORCH_MODULE(Film);

class ConditionalAttentionBiasImpl : public torch::nn::Module {
 public:
  // length L (every input padded to it), blocks N (1 = one full L × L block, the thesis's
  // FBA ablation).
  ConditionalAttentionBiasImpl(std::int64_t condition_dim, std::int64_t length, std::int64_t blocks);
  // The bias [B, 1, L, L] for task embeddings z [B, dz], shared by every head.
  at::Tensor forward(const at::Tensor& z);
  std::int64_t block_length() const { return block_; }

  at::Tensor weight;  // W0 [L, s], zero-initialised as in the public code
  Film film{nullptr};

 private:
  std::int64_t length_, blocks_, block_;
  at::Tensor columns_;  // [L, s] int64: where row i's s entries sit among the N * s columns
};
TORCH_MODULE(ConditionalAttentionBias);

// The weight a LayerNorm of width d uses for each row, given its own weight: (1 + γ) ⊙ w + β,
// [B, 1, d] (what LayerConditioning's norm weights take).
class ConditionalLayerNormImpl : public torch::nn::Module {
 public:
  ConditionalLayerNormImpl(std::int64_t condition_dim, std::int64_t d);
  at::Tensor forward(const at::Tensor& norm_weight, const at::Tensor& z);

  Film film{nullptr};
};
TORCH_MODULE(ConditionalLayerNorm);

class ConditionalBottleneckImpl : public torch::nn::Module {
 public:
  ConditionalBottleneckImpl(std::int64_t condition_dim, std::int64_t d);
  at::Tensor forward(const at::Tensor& h, const at::Tensor& z);  // h [B, L, d]

  Film film{nullptr};
  torch::nn::Linear down{nullptr}, up{nullptr};
};
TORCH_MODULE(ConditionalBottleneck);

}  // namespace strata::nn
