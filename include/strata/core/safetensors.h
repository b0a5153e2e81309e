#pragma once
// safetensors, the weights format of Hugging Face, at the byte level (no libtorch, so tools
// without tensors can inspect weight files). Layout: an 8-byte little-endian header length N,
// N bytes of JSON header (name -> dtype, shape, data_offsets; optional "__metadata__"
// string map), then the tensors' bytes, contiguous, little-endian, row-major.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// One tensor as the header describes it; [begin, end) is relative to the data section.
struct TensorEntry {
  std::string name;
  std::string dtype;  // F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL
  std::vector<std::int64_t> shape;
  std::size_t begin = 0, end = 0;
};

// A safetensors file mapped into memory, its header validated strictly on opening: any
// inconsistency is a strata::Error naming the file and the tensor or field.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  const std::vector<TensorEntry>& entries() const { return entries_; }  // sorted by name
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // strata::Error when the file holds no tensor of that name.
  const TensorEntry& entry(std::string_view name) const;
  // The tensor's bytes inside the mapping; valid while this object (or a copy) lives.
  std::span<const std::byte> bytes(const TensorEntry& entry) const;

 private:
  std::filesystem::path path_;
  std::shared_ptr<const std::byte> mapping_;  // the whole file; unmapped with the last copy
  std::span<const std::byte> data_;           // the data section after the header
  std::vector<TensorEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// A tensor to write. `bytes` is a view: it must stay alive for the call.
struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;
};

// Writes the tensors in name order with the header padded to 8 bytes, atomically: inputs are
// validated first (known dtype, unique names, byte count = elements × dtype size) and any
// existing file is replaced only once the new one is complete.
void write_safetensors(const std::filesystem::path& path, const std::vector<RawTensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace strata
