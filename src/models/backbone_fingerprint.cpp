#include "strata/models/backbone_fingerprint.h"

#include <torch/torch.h>

#include <cstdint>
#include <cstdio>

#include "strata/nn/adapters.h"

namespace strata::models {
namespace {

void fnv1a(std::uint64_t& hash, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ULL;
  }
}

}  // namespace

std::string backbone_fingerprint(const torch::nn::Module& model) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const auto& item : model.named_parameters()) {
    if (item.key().starts_with("prefix.") || nn::is_adapter_parameter(item.key())) continue;
    fnv1a(hash, item.key().data(), item.key().size());
    const at::Tensor t = item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
    for (const std::int64_t d : t.sizes()) fnv1a(hash, &d, sizeof d);
    fnv1a(hash, t.data_ptr(), static_cast<std::size_t>(t.numel()) * sizeof(float));
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace strata::models
