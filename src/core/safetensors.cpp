#include "strata/core/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::size_t kLengthBytes = 8;
constexpr std::string_view kMetadataKey = "__metadata__";

std::optional<std::size_t> dtype_size(std::string_view dtype) {
  static const std::map<std::string_view, std::size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  const auto it = sizes.find(dtype);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

// Elements × element size; the dtype must be known and the shape non-negative and small
// enough that the product cannot overflow (a corrupt header must not wrap around).
std::size_t expected_bytes(const fs::path& path, const std::string& name, const std::string& dtype,
                           const std::vector<std::int64_t>& shape) {
  const auto element = dtype_size(dtype);
  if (!element) throw error_at(path, 0, name + ".dtype", fmt::format("unknown dtype '{}'", dtype));
  std::size_t total = *element;
  for (const std::int64_t dim : shape) {
    if (dim < 0)
      throw error_at(path, 0, name + ".shape", fmt::format("negative dimension {}", dim));
    if (__builtin_mul_overflow(total, static_cast<std::size_t>(dim), &total))
      throw error_at(path, 0, name + ".shape", "the tensor's size overflows");
  }
  return total;
}

// The whole file, read-only; weight files can be gigabytes, so they are mapped, not read.
std::shared_ptr<const std::byte> map_file(const fs::path& path, std::size_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw error_at(path, 0, "", fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw error_at(path, 0, "", "not a regular file");
  }
  size = static_cast<std::size_t>(info.st_size);
  if (size < kLengthBytes) {
    ::close(fd);
    throw error_at(path, 0, "",
                   fmt::format("{} bytes is too short for a safetensors header", size));
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (data == MAP_FAILED)
    throw error_at(path, 0, "", fmt::format("cannot map: {}", std::strerror(mmap_errno)));
  return {static_cast<const std::byte*>(data),
          [size](const std::byte* p) { ::munmap(const_cast<std::byte*>(p), size); }};
}

std::uint64_t read_u64_le(const std::byte* p) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < kLengthBytes; ++i)
    value |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return value;
}

// nlohmann keeps the last of duplicate keys silently; a weights file with two tensors of one
// name is ambiguous, so the parser callback reports the first duplicate at any depth.
Json parse_header(const fs::path& path, std::string_view text) {
  std::vector<std::vector<std::string>> keys_per_object;
  std::optional<std::string> duplicate;
  std::size_t duplicate_depth = 0;
  const Json::parser_callback_t note_keys = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys_per_object.emplace_back();
    if (event == Json::parse_event_t::object_end) keys_per_object.pop_back();
    if (event == Json::parse_event_t::key && !duplicate) {
      auto& keys = keys_per_object.back();
      const std::string key = parsed.get<std::string>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        duplicate = key;
        duplicate_depth = keys_per_object.size();
      }
      keys.push_back(key);
    }
    return true;
  };
  Json header;
  try {
    header = Json::parse(text, note_keys);
  } catch (const Json::exception& e) {
    throw error_at(path, 0, "header", fmt::format("not valid JSON: {}", e.what()));
  }
  if (duplicate)
    throw error_at(path, 0, *duplicate,
                   duplicate_depth == 1 ? "duplicate tensor name" : "duplicate key in header");
  if (!header.is_object()) throw error_at(path, 0, "header", "not a JSON object");
  return header;
}

std::uint64_t unsigned_field(const fs::path& path, const std::string& field, const Json& value) {
  if (!value.is_number_unsigned())
    throw error_at(path, 0, field,
                   fmt::format("expected a non-negative integer, got {}", value.dump()));
  return value.get<std::uint64_t>();
}

TensorEntry parse_entry(const fs::path& path, const std::string& name, const Json& value,
                        std::size_t data_size) {
  if (!value.is_object()) throw error_at(path, 0, name, "expected an object");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!value.contains(key)) throw error_at(path, 0, name, fmt::format("missing '{}'", key));
  TensorEntry entry;
  entry.name = name;
  if (!value["dtype"].is_string()) throw error_at(path, 0, name + ".dtype", "expected a string");
  entry.dtype = value["dtype"].get<std::string>();
  if (!value["shape"].is_array()) throw error_at(path, 0, name + ".shape", "expected an array");
  for (const Json& dim : value["shape"]) {
    const std::uint64_t d = unsigned_field(path, name + ".shape", dim);
    if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw error_at(path, 0, name + ".shape", fmt::format("dimension {} is too large", d));
    entry.shape.push_back(static_cast<std::int64_t>(d));
  }
  const Json& offsets = value["data_offsets"];
  const std::string offsets_field = name + ".data_offsets";
  if (!offsets.is_array() || offsets.size() != 2)
    throw error_at(path, 0, offsets_field, "expected [begin, end]");
  const std::uint64_t begin = unsigned_field(path, offsets_field, offsets[0]);
  const std::uint64_t end = unsigned_field(path, offsets_field, offsets[1]);
  if (begin > end)
    throw error_at(path, 0, offsets_field, fmt::format("begin {} is after end {}", begin, end));
  if (end > data_size)
    throw error_at(path, 0, offsets_field,
                   fmt::format("[{}, {}] is out of range: the data section holds {} bytes", begin,
                               end, data_size));
  entry.begin = begin;
  entry.end = end;
  const std::size_t expected = expected_bytes(path, name, entry.dtype, entry.shape);
  if (end - begin != expected)
    throw error_at(path, 0, offsets_field,
                   fmt::format("spans {} bytes, but shape and dtype {} need {}", end - begin,
                               entry.dtype, expected));
  return entry;
}

// Tensors must tile the data section exactly: no overlap (two tensors sharing bytes), no gap
// and no trailing bytes (data no tensor owns, a sign of a truncated or spliced header).
void check_tiling(const fs::path& path, std::vector<TensorEntry> entries, std::size_t data_size) {
  std::sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  std::size_t covered = 0;
  std::string previous = "the start of the data";
  for (const TensorEntry& entry : entries) {
    const std::string field = entry.name + ".data_offsets";
    if (entry.begin < covered)
      throw error_at(
          path, 0, field,
          fmt::format("overlaps {} (begins at {}, before {})", previous, entry.begin, covered));
    if (entry.begin > covered)
      throw error_at(
          path, 0, field,
          fmt::format("leaves a gap of {} bytes after {}", entry.begin - covered, previous));
    covered = entry.end;
    previous = "'" + entry.name + "'";
  }
  if (covered != data_size)
    throw error_at(path, 0, "data_offsets",
                   fmt::format("the tensors cover {} bytes, but the data section holds {}", covered,
                               data_size));
}

}  // namespace

SafetensorsFile::SafetensorsFile(const fs::path& path) : path_(path) {
  std::size_t size = 0;
  mapping_ = map_file(path, size);
  const std::uint64_t header_length = read_u64_le(mapping_.get());
  if (header_length > size - kLengthBytes)
    throw error_at(path, 0, "header length",
                   fmt::format("{} bytes, beyond the {} bytes that follow it", header_length,
                               size - kLengthBytes));
  const std::string_view text(reinterpret_cast<const char*>(mapping_.get()) + kLengthBytes,
                              header_length);
  const std::size_t data_offset = kLengthBytes + header_length;
  data_ = std::span(mapping_.get() + data_offset, size - data_offset);

  const Json header = parse_header(path, text);
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) {
      if (!value.is_object()) throw error_at(path, 0, name, "expected an object of strings");
      for (const auto& [key, text_value] : value.items()) {
        if (!text_value.is_string()) throw error_at(path, 0, name + "." + key, "expected a string");
        metadata_.emplace(key, text_value.get<std::string>());
      }
      continue;
    }
    entries_.push_back(parse_entry(path, name, value, data_.size()));
  }
  check_tiling(path, entries_, data_.size());
}

const TensorEntry& SafetensorsFile::entry(std::string_view name) const {
  const auto it =
      std::lower_bound(entries_.begin(), entries_.end(), name,
                       [](const TensorEntry& e, std::string_view n) { return e.name < n; });
  if (it == entries_.end() || it->name != name)
    throw error_at(path_, 0, name, "no such tensor in the file");
  return *it;
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorEntry& entry) const {
  if (entry.begin > entry.end || entry.end > data_.size())
    throw error_at(path_, 0, entry.name, "entry does not belong to this file");
  return data_.subspan(entry.begin, entry.end - entry.begin);
}

void write_safetensors(const fs::path& path, const std::vector<RawTensor>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  std::vector<const RawTensor*> order;
  for (const RawTensor& tensor : tensors) order.push_back(&tensor);
  std::sort(order.begin(), order.end(),
            [](const RawTensor* a, const RawTensor* b) { return a->name < b->name; });

  Json header = Json::object();
  std::size_t offset = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const RawTensor& tensor = *order[i];
    if (tensor.name.empty() || tensor.name == kMetadataKey)
      throw error_at(path, 0, tensor.name, "reserved or empty tensor name");
    if (i > 0 && order[i - 1]->name == tensor.name)
      throw error_at(path, 0, tensor.name, "duplicate tensor name");
    const std::size_t expected = expected_bytes(path, tensor.name, tensor.dtype, tensor.shape);
    if (tensor.bytes.size() != expected)
      throw error_at(path, 0, tensor.name,
                     fmt::format("{} bytes given, but shape and dtype {} need {}",
                                 tensor.bytes.size(), tensor.dtype, expected));
    header[tensor.name] = Json{{"dtype", tensor.dtype},
                               {"shape", tensor.shape},
                               {"data_offsets", Json::array({offset, offset + expected})}};
    offset += expected;
  }
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;

  std::string text;
  try {
    text = header.dump();
  } catch (const Json::type_error&) {
    throw error_at(path, 0, "header", "tensor names and metadata must be valid UTF-8");
  }
  // Spaces pad the header so the data section starts 8-byte aligned, as HF's writer does.
  text.append((kLengthBytes - text.size() % kLengthBytes) % kLengthBytes, ' ');
  char length[kLengthBytes];
  for (std::size_t i = 0; i < kLengthBytes; ++i)
    length[i] = static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xff);

  AtomicFile file(path);
  file.stream().write(length, kLengthBytes);
  file.stream().write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const RawTensor* tensor : order)
    file.stream().write(reinterpret_cast<const char*>(tensor->bytes.data()),
                        static_cast<std::streamsize>(tensor->bytes.size()));
  file.commit();
}

}  // namespace strata
