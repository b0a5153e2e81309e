#pragma once
// Tensors to and from safetensors files (strata/core/safetensors.h holds the byte level).
// Supported: float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace strata {

// Saves contiguous CPU copies (any device, any strides are accepted), atomically; an
// unsupported dtype is a strata::Error naming the tensor.
void save_tensors(const std::filesystem::path& path,
                  const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                  const std::map<std::string, std::string>& metadata = {});

// Every tensor of the file as an owned CPU tensor (copied out of the mapping).
std::map<std::string, at::Tensor> load_tensors(const std::filesystem::path& path);

}  // namespace strata
