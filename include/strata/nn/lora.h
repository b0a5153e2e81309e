#pragma once
// LoRA (Hu et al. 2021): a frozen linear map W x + b gains a trained low-rank update
//   (alpha / r) · B A dropout(x),   A [r, in], B [out, r],
// with A drawn like torch's Linear weight (Kaiming-uniform) and B at zero, so a model given
// LoRA starts as its base. For inference the update folds into the weight: W += (alpha/r)·B A.
// nn::AdaptableLinear holds the tensors; nn/adapters.h attaches them to a model's modules.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::nn {

// One linear map's LoRA.
struct LoraSettings {
  std::int64_t r = 8;
  double alpha = 16.0;
  double dropout = 0.0;  // on the adapter's input, while training

  double scale() const { return alpha / static_cast<double>(r); }
  bool operator==(const LoraSettings&) const = default;
  // strata::Error naming the field for r <= 0, alpha <= 0 or dropout outside [0, 1).
  void check() const;
};

// add_lora's options: the settings, and which linear maps get them (globs over the modules'
// full names, e.g. "encoder.layers.0.self_attn.q_proj"; '*' crosses dots). The default is HF
// PEFT's for BART: the query and value projections of every attention.
struct LoraOptions {
  LoraSettings settings{};
  std::vector<std::string> targets = {"*.q_proj", "*.v_proj"};
};

struct LoraWeights {
  at::Tensor A;  // [r, in]
  at::Tensor B;  // [out, r]
};

// Fresh LoRA weights for a linear map of weight [out, in], on the weight's device and dtype:
// A Kaiming-uniform (bound 1/sqrt(in), from the global generator), B zero.
LoraWeights init_lora(const at::Tensor& weight, const LoraSettings& settings);

// The update for input x [.., in]: scale · B A dropout(x), [.., out].
at::Tensor lora_update(const at::Tensor& x, const LoraWeights& lora, const LoraSettings& settings, bool training);

// The update as a weight, scale · B A [out, in] (what merging adds to W).
at::Tensor lora_delta_weight(const LoraWeights& lora, const LoraSettings& settings);

}  // namespace strata::nn
