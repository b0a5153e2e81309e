#include "strata/nn/bottleneck_adapter.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::nn {

void BottleneckSettings::check() const {
  if (size <= 0) throw Error("bottleneck.size: must be positive, got " + std::to_string(size));
  if (activation != "relu" && activation != "gelu")
    throw Error("bottleneck.activation: unknown activation '" + activation + "' (known: relu, gelu)");
}

BottleneckAdapterImpl::BottleneckAdapterImpl(std::int64_t features, const BottleneckSettings& settings)
    : settings_(settings) {
  settings.check();
  down = register_module("down", torch::nn::Linear(features, settings.size));
  up = register_module("up", ZeroInitLinear(settings.size, features));
}

at::Tensor BottleneckAdapterImpl::forward(const at::Tensor& y) {
  const at::Tensor h = down(y);
  return y + up(settings_.activation == "gelu" ? torch::gelu(h) : torch::relu(h));
}

}  // namespace strata::nn
