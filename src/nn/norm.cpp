#include "strata/nn/norm.h"

#include <torch/torch.h>

namespace strata::nn {

NormImpl::NormImpl(const NormOptions& options) : options_(options) {
  weight = register_parameter("weight", torch::ones({options.d}));
  if (!options.rms) bias = register_parameter("bias", torch::zeros({options.d}));
}

at::Tensor NormImpl::normalise(const at::Tensor& x) const {
  if (!options_.rms) return torch::layer_norm(x, {options_.d}, {}, {}, options_.eps);
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + options_.eps);
}

at::Tensor NormImpl::forward(const at::Tensor& x) {
  if (!options_.rms) return torch::layer_norm(x, {options_.d}, weight, bias, options_.eps);
  return normalise(x) * weight;
}

at::Tensor NormImpl::forward_with_weight(const at::Tensor& x, const at::Tensor& w) {
  const at::Tensor scaled = normalise(x) * w;
  return bias.defined() ? scaled + bias : scaled;
}

}  // namespace strata::nn
