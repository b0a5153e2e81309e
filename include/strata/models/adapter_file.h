#pragma once
// Adapters as a small file that loads onto their base model (HF PEFT's adapter files): a
// safetensors file holding only the adapters' tensors with JSON metadata: the format
// ("strata-adapter/1"), the adapters (each kind with its settings and the modules it went on)
// and the fingerprint of the base they were trained on, so that they are never applied to
// another base, even one of the same sizes.
//
// One format for the four kinds. LoRA and bottleneck adapters wrap the linear maps of a built
// model. Prefix-tuning and PALs are built into the model (their keys and heads enter the
// attention specs): for them the file also holds the adapted model's config ("model"), which
// agrees with its base's on every backbone field, and a prefix is stored as the keys and
// values its MLP produced (`prefix_states.{encoder,decoder,cross}.N.{key,value}`, [H, P, Dh]),
// all a tuned prefix needs.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/models/model_config.h"
#include "strata/nn/adapters.h"
#include "strata/nn/prefix_tuning.h"

namespace strata::models {

struct AdapterFile {
  std::string fingerprint;  // the base's backbone_fingerprint
  // One entry per distinct settings; targets are the exact full names of the modules.
  std::vector<nn::LoraOptions> lora;
  std::vector<nn::BottleneckOptions> bottleneck;
  std::optional<ModelConfig> model;          // with prefixes or PALs: the adapted model's config
  std::optional<nn::PrefixStates> prefix;    // with prefixes: what every prefixed layer receives
  std::map<std::string, at::Tensor> tensors;  // LoRA, bottleneck and PAL tensors by parameter name
};

// Writes the model's adapters, atomically: LoRA and bottleneck tensors, a Seq2Seq's prefix
// states (computed without gradient) and PAL tensors, with `config` (the model's) when it has
// prefixes or PALs, and the base's fingerprint. strata::Error for a model without adapters, or
// with LoRA merged into its weights (they are not the base's then: unmerge first).
void save_adapter_file(const std::filesystem::path& file, torch::nn::Module& model, const ModelConfig& config);

// strata::Error naming the file when it is not a strata adapter file or is malformed.
AdapterFile read_adapter_file(const std::filesystem::path& file);

// The config to build the adapted model from: the base's, or the file's when its adapters are
// built into the model, after checking that they were trained on a model of the base's
// architecture and sizes (strata::Error naming the file, the field and both values) and that
// the base has no prefixes or PALs of its own.
ModelConfig adapted_config(const ModelConfig& base, const AdapterFile& adapters, const std::filesystem::path& file);

// Puts the file's adapters on `base`, a model built from adapted_config() with the base's
// weights loaded: fixes the prefix (a Seq2Seq's MLP is dropped), checks that it is the base
// they were trained on (strata::Error naming the file and both fingerprints otherwise), adds
// LoRA and bottleneck adapters with the recorded settings and loads every adapter tensor.
// Returns the modules that got adapters and the elements added. A tensor missing from the
// file or of another shape is a strata::Error naming it: discard the model then.
nn::AdapterReport load_adapter_file(const AdapterFile& adapters, const std::filesystem::path& file,
                                    torch::nn::Module& base);
// The same, reading the file first.
nn::AdapterReport load_adapter_file(const std::filesystem::path& file, torch::nn::Module& base);

}  // namespace strata::models
