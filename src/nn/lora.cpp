#include "strata/nn/lora.h"

#include <torch/torch.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/nn/dropout.h"

namespace strata::nn {

void LoraSettings::check() const {
  if (r <= 0) throw Error("lora.r: the rank must be positive, got " + std::to_string(r));
  if (!(alpha > 0.0)) throw Error("lora.alpha: must be positive, got " + std::to_string(alpha));
  if (!(dropout >= 0.0 && dropout < 1.0))
    throw Error("lora.dropout: must be in [0, 1), got " + std::to_string(dropout));
}

LoraWeights init_lora(const at::Tensor& weight, const LoraSettings& settings) {
  torch::NoGradGuard no_grad;
  const std::int64_t out = weight.size(0), in = weight.size(1);
  const auto options = weight.options().requires_grad(false);
  // kaiming_uniform_(a = sqrt(5)) as torch's Linear and HF PEFT draw it: bound 1/sqrt(in).
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  return {torch::empty({settings.r, in}, options).uniform_(-bound, bound), torch::zeros({out, settings.r}, options)};
}

at::Tensor lora_update(const at::Tensor& x, const LoraWeights& lora, const LoraSettings& settings, bool training) {
  namespace F = torch::nn::functional;
  const at::Tensor input = settings.dropout > 0.0 ? nn::dropout(x, settings.dropout, training) : x;
  return F::linear(F::linear(input, lora.A), lora.B) * settings.scale();
}

at::Tensor lora_delta_weight(const LoraWeights& lora, const LoraSettings& settings) {
  return torch::mm(lora.B, lora.A) * settings.scale();
}

}  // namespace strata::nn
