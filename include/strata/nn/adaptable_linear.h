#pragma once
// A linear map that adapters attach to. It is torch's Linear (the same construction and
// random draws, the parameters `weight` and `bias`, found by `as<torch::nn::Linear>()`) whose
// forward adds a LoRA update and runs a bottleneck adapter on the output when they are
// attached; without them it computes what torch's Linear does, by strata's own product where
// that runs (nn/linear_product.h; equal up to the summation order). A type of its own
// because libtorch has no forward hooks and LinearImpl::forward is not virtual: the models
// use it for every linear map an adapter may target (attention projections, fc1/fc2,
// lm_head, classifier). nn/adapters.h attaches adapters to a whole model by name.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "strata/nn/bottleneck_adapter.h"
#include "strata/nn/lora.h"

namespace strata::nn {

class AdaptableLinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;

  // weight x + bias, plus the LoRA update unless it is merged, then the bottleneck adapter.
  at::Tensor forward(const at::Tensor& x);

  // Registers `lora_A` [r, in] and `lora_B` [out, r] (init_lora). strata::Error when the map
  // has LoRA already.
  void add_lora(const LoraSettings& settings);
  bool has_lora() const { return lora_A.defined(); }
  const LoraSettings& lora_settings() const { return lora_settings_; }
  // weight += scale · B A, after which forward skips the LoRA path; unmerge_lora subtracts it
  // again (the old weight up to rounding). strata::Error without LoRA, or merging twice /
  // unmerging what is not merged.
  void merge_lora();
  void unmerge_lora();
  bool lora_merged() const { return lora_merged_; }
  // Unregisters lora_A and lora_B and leaves the weight as it is (merged or not).
  void remove_lora();

  // Registers `bottleneck`, run on the output. strata::Error when the map has one already.
  void add_bottleneck(const BottleneckSettings& settings);

  at::Tensor lora_A, lora_B;             // undefined without LoRA
  BottleneckAdapter bottleneck{nullptr};  // null without a bottleneck adapter

 private:
  LoraWeights lora() const { return {lora_A, lora_B}; }

  LoraSettings lora_settings_;
  bool lora_merged_ = false;
};
TORCH_MODULE(AdaptableLinear);

}  // namespace strata::nn
