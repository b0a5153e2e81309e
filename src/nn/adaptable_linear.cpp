#include "strata/nn/adaptable_linear.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/nn/linear_product.h"

namespace strata::nn {

at::Tensor AdaptableLinearImpl::forward(const at::Tensor& x) {
  at::Tensor y = linear_product(x, weight, bias);
  if (has_lora() && !lora_merged_) y = y + lora_update(x, lora(), lora_settings_, is_training());
  return bottleneck ? bottleneck(y) : y;
}

void AdaptableLinearImpl::add_lora(const LoraSettings& settings) {
  if (has_lora()) throw Error("this linear map has LoRA already");
  settings.check();
  const LoraWeights fresh = init_lora(weight, settings);
  lora_A = register_parameter("lora_A", fresh.A);
  lora_B = register_parameter("lora_B", fresh.B);
  lora_settings_ = settings;
  lora_merged_ = false;
}

void AdaptableLinearImpl::merge_lora() {
  if (!has_lora()) throw Error("merging LoRA: this linear map has none");
  if (lora_merged_) throw Error("merging LoRA: it is merged already");
  torch::NoGradGuard no_grad;
  weight.add_(lora_delta_weight(lora(), lora_settings_));
  lora_merged_ = true;
}

void AdaptableLinearImpl::unmerge_lora() {
  if (!has_lora() || !lora_merged_) throw Error("unmerging LoRA: this linear map has no merged LoRA");
  torch::NoGradGuard no_grad;
  weight.sub_(lora_delta_weight(lora(), lora_settings_));
  lora_merged_ = false;
}

void AdaptableLinearImpl::remove_lora() {
  if (!has_lora()) return;
  // Module has no unregister_parameter; the parameter dict is ours to edit as a subclass.
  parameters_.erase("lora_A");
  parameters_.erase("lora_B");
  lora_A = at::Tensor();
  lora_B = at::Tensor();
  lora_merged_ = false;
}

void AdaptableLinearImpl::add_bottleneck(const BottleneckSettings& settings) {
  if (bottleneck) throw Error("this linear map has a bottleneck adapter already");
  BottleneckAdapter adapter(weight.size(0), settings);
  adapter->to(weight.device(), weight.scalar_type());
  adapter->train(is_training());
  bottleneck = register_module("bottleneck", adapter);
}

}  // namespace strata::nn
