#include "strata/nn/zero_init_linear.h"

#include <torch/torch.h>

namespace strata::nn {

ZeroInitLinearImpl::ZeroInitLinearImpl(std::int64_t in_features, std::int64_t out_features) {
  weight = register_parameter("weight", torch::zeros({out_features, in_features}));
  bias = register_parameter("bias", torch::zeros({out_features}));
}

at::Tensor ZeroInitLinearImpl::forward(const at::Tensor& x) {
  return torch::nn::functional::linear(x, weight, bias);
}

}  // namespace strata::nn
