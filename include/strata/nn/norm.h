#pragma once
// The normalisation of a Transformer block: LayerNorm (weight and bias, as BART, BERT and
// GPT-2) or RMS norm (scale only, no mean subtracted: T5's). Parameters are named `weight`
// and `bias` as torch's LayerNorm names them, so checkpoints written before this module load.
#include <torch/nn/module.h>

#include <cstdint>

namespace strata::nn {

struct NormOptions {
  std::int64_t d = 256;
  bool rms = false;
  double eps = 1e-5;
};

class NormImpl : public torch::nn::Module {
 public:
  explicit NormImpl(const NormOptions& options);

  at::Tensor forward(const at::Tensor& x);
  // With `weight` (broadcast to x, e.g. [B, 1, d]) in place of the norm's own weight; the bias
  // stays: a conditional LayerNorm (CA-MTL).
  at::Tensor forward_with_weight(const at::Tensor& x, const at::Tensor& weight);

  const NormOptions& options() const { return options_; }

  at::Tensor weight, bias;  // bias undefined for an RMS norm

 private:
  at::Tensor normalise(const at::Tensor& x) const;  // without weight and bias

  NormOptions options_;
};
TORCH_MODULE(Norm);

}  // namespace strata::nn
