#pragma once
// Adapters as a small file that loads onto their base model (HF PEFT's adapter files): a
// safetensors file holding only the adapters' tensors, under their parameter names, with
// JSON metadata: the format ("strata-adapter/1"), the adapters (each kind with its settings
// and the modules it went on) and the fingerprint of the base they were trained on, so that
// they are never applied to another base, even one of the same sizes. Any model whose
// linear maps are nn::AdaptableLinear (Seq2Seq, CausalLm, EncoderModel).
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "strata/nn/adapters.h"

namespace strata::models {

struct AdapterFile {
  std::string fingerprint;  // the base's backbone_fingerprint
  // One entry per distinct settings; targets are the exact full names of the modules.
  std::vector<nn::LoraOptions> lora;
  std::vector<nn::BottleneckOptions> bottleneck;
  std::map<std::string, at::Tensor> tensors;  // by parameter name
};

// Writes the model's adapter tensors, settings and base fingerprint, atomically. strata::Error
// for a model without adapters, or with LoRA merged into its weights (they are not the
// base's then: unmerge first).
void save_adapter_file(const std::filesystem::path& file, const torch::nn::Module& model);

// strata::Error naming the file when it is not a strata adapter file or is malformed.
AdapterFile read_adapter_file(const std::filesystem::path& file);

// Puts the file's adapters on `base` (a model without adapters): checks that it is the base
// they were trained on (strata::Error naming the file and both fingerprints otherwise, before
// anything changes), adds the adapters with the recorded settings and loads their tensors.
// Returns the modules that got adapters (one with both kinds twice) and the elements added.
// A tensor missing from the file or of another shape is a strata::Error naming it, raised
// once the adapters are added: discard the model then.
nn::AdapterReport load_adapter_file(const std::filesystem::path& file, torch::nn::Module& base);

}  // namespace strata::models
