#pragma once
// A linear map whose weight and bias start at zero, for a branch added to a trained model that
// must leave its output unchanged until trained (a PAL's up-projection, a bottleneck adapter's).
// Not a torch::nn::Linear on purpose: the models' init_weights re-draws every
// torch::nn::Linear, which would undo the zero start.
#include <torch/nn/module.h>

#include <cstdint>

namespace strata::nn {

class ZeroInitLinearImpl : public torch::nn::Module {
 public:
  ZeroInitLinearImpl(std::int64_t in_features, std::int64_t out_features);
  at::Tensor forward(const at::Tensor& x);

  at::Tensor weight, bias;  // [out, in], [out]
};
TORCH_MODULE(ZeroInitLinear);

}  // namespace strata::nn
