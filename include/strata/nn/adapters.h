#pragma once
// Adapters on a built model, the way HF PEFT's get_peft_model wraps one: LoRA (nn/lora.h)
// and bottleneck adapters (nn/bottleneck_adapter.h) attach to the nn::AdaptableLinear maps
// whose full names match glob patterns, on any module (models::Seq2Seq, CausalLm,
// EncoderModel alike). Prefix-tuning (nn/prefix_tuning.h) and PALs
// (nn/projected_attention_layer.h) are adapters too, but ones a model is built with, since
// their keys and heads enter the attention specs; the names below cover all four. The base's
// tensors stay trainable: train only the adapters with
//   train::train_only(model, adapter_patterns(model));
//
// Parameter names: LoRA adds `<linear>.lora_A` [r, in] and `<linear>.lora_B` [out, r], e.g.
// encoder.layers.0.self_attn.q_proj.lora_A; a bottleneck adapter adds
// `<linear>.bottleneck.down.{weight,bias}` and `<linear>.bottleneck.up.{weight,bias}`, e.g.
// decoder.layers.1.fc2.bottleneck.up.weight; prefix-tuning's MLP is `prefix.*`, a PAL
// `encoder.layers.N.pal.*`.
#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/nn/adaptable_linear.h"

namespace strata::nn {

struct AdapterReport {
  std::vector<std::string> modules;  // full names of the linear maps given an adapter, in module order
  std::int64_t parameters = 0;       // elements added
};

// Every nn::AdaptableLinear of the model with its full name, in module order.
std::vector<std::pair<std::string, AdaptableLinear>> adaptable_linears(const torch::nn::Module& model);

// Gives every adaptable linear map whose full name matches one of options.targets LoRA with
// options.settings (a fresh wrap computes exactly what the base computes). strata::Error,
// before anything changes, for bad settings, a target pattern that matches no adaptable map
// (naming it and the patterns), or a matched map that has LoRA already.
AdapterReport add_lora(torch::nn::Module& model, const LoraOptions& options);

// The same for bottleneck adapters on the matched maps' outputs.
AdapterReport add_bottleneck(torch::nn::Module& model, const BottleneckOptions& options);

enum class LoraMerge {
  Unload,      // then remove the LoRA tensors: the model is a plain one with new weights
  KeepAdapter  // keep them, so that unmerge_lora can take the update out again
};

// Folds every unmerged LoRA into its weight (W += alpha/r · B A) for inference, and returns
// the merged maps' names. strata::Error when the model has no unmerged LoRA.
std::vector<std::string> merge_lora(torch::nn::Module& model, LoraMerge mode = LoraMerge::Unload);

// Takes merged LoRA updates (LoraMerge::KeepAdapter) out of the weights again and returns the
// maps' names. strata::Error when none is merged.
std::vector<std::string> unmerge_lora(torch::nn::Module& model);

// Whether a parameter's full name is an adapter's tensor (LoRA's, a bottleneck adapter's,
// prefix-tuning's MLP or a PAL's).
bool is_adapter_parameter(std::string_view name);

// Whether any linear map of the model has LoRA or a bottleneck adapter.
bool has_linear_adapters(const torch::nn::Module& model);

// The model's adapter parameters' names, in module order.
std::vector<std::string> adapter_parameter_names(const torch::nn::Module& model);

// Globs naming the model's adapter tensors, for train::train_only: {"*.lora_A", "*.lora_B"}
// with LoRA, "*.bottleneck.*" with bottleneck adapters, "prefix.*" with prefixes, "*.pal.*"
// with PALs. strata::Error for a model without adapters (an empty list would leave every
// parameter trainable).
std::vector<std::string> adapter_patterns(const torch::nn::Module& model);

}  // namespace strata::nn
