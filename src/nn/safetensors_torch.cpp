#include "strata/nn/safetensors_torch.h"

#include <torch/torch.h>

#include <bit>
#include <cstring>

#include "strata/core/error.h"
#include "strata/core/safetensors.h"

namespace strata {
namespace {

// safetensors is little-endian and tensors are copied byte for byte.
static_assert(std::endian::native == std::endian::little,
              "safetensors I/O assumes a little-endian host");

struct DtypeName {
  at::ScalarType type;
  const char* name;
};

constexpr DtypeName kDtypes[] = {{at::kDouble, "F64"},    {at::kFloat, "F32"}, {at::kHalf, "F16"},
                                 {at::kBFloat16, "BF16"}, {at::kLong, "I64"},  {at::kInt, "I32"},
                                 {at::kShort, "I16"},     {at::kChar, "I8"},   {at::kByte, "U8"},
                                 {at::kBool, "BOOL"}};

const char* dtype_name(const std::filesystem::path& path, const std::string& tensor,
                       at::ScalarType type) {
  for (const DtypeName& d : kDtypes)
    if (d.type == type) return d.name;
  throw error_at(path, 0, tensor, std::string("unsupported dtype ") + c10::toString(type));
}

at::ScalarType scalar_type(const std::filesystem::path& path, const TensorEntry& entry) {
  for (const DtypeName& d : kDtypes)
    if (entry.dtype == d.name) return d.type;
  throw error_at(path, 0, entry.name + ".dtype", "unsupported dtype " + entry.dtype);
}

}  // namespace

void save_tensors(const std::filesystem::path& path,
                  const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                  const std::map<std::string, std::string>& metadata) {
  // The copies own the bytes that the RawTensor views point at until the write is done.
  std::vector<at::Tensor> copies;
  std::vector<RawTensor> raw;
  copies.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const char* dtype = dtype_name(path, name, tensor.scalar_type());
    copies.push_back(tensor.detach().to(at::kCPU).contiguous());
    const at::Tensor& copy = copies.back();
    raw.push_back({name, dtype, copy.sizes().vec(),
                   std::span(static_cast<const std::byte*>(copy.data_ptr()), copy.nbytes())});
  }
  write_safetensors(path, raw, metadata);
}

std::map<std::string, at::Tensor> load_tensors(const std::filesystem::path& path) {
  const SafetensorsFile file(path);
  std::map<std::string, at::Tensor> tensors;
  for (const TensorEntry& entry : file.entries()) {
    const auto bytes = file.bytes(entry);
    at::Tensor tensor = at::empty(entry.shape, at::TensorOptions().dtype(scalar_type(path, entry)));
    // A bool byte other than 0 or 1 is undefined behaviour for libtorch's kernels.
    if (entry.dtype == "BOOL")
      for (const std::byte b : bytes)
        if (static_cast<unsigned char>(b) > 1)
          throw error_at(path, 0, entry.name, "BOOL byte is neither 0 nor 1");
    if (!bytes.empty()) std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
    tensors.emplace(entry.name, std::move(tensor));
  }
  return tensors;
}

}  // namespace strata
