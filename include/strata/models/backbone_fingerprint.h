#pragma once
// A fingerprint of a model's frozen backbone, which a tuned prefix or adapter file records so
// that it is never applied to another base, even one of the same sizes.
#include <torch/nn/module.h>

#include <string>

namespace strata::models {

// FNV-1a, as 16 hex digits, over the names, shapes and float32 bytes of every parameter that
// is not tuned on top of a base: not under "prefix." and not an adapter's
// (nn::is_adapter_parameter). Equal for a base model and for the same model prefix-tuned or
// given adapters with the backbone frozen, on any module.
std::string backbone_fingerprint(const torch::nn::Module& model);

}  // namespace strata::models
