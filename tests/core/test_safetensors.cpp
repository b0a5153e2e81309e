#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <initializer_list>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/safetensors.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

fs::path safetensors_path(const std::string& name) {
  return fs::temp_directory_path() /
         ("strata_safetensors_" + std::to_string(::getpid()) + "_" + name);
}

std::string le_u64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

// A file of the given header text and data bytes; the length field says the header's size.
std::string file_bytes(const std::string& header, const std::string& data) {
  return le_u64(header.size()) + header + data;
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// 1.0f and -2.0f, little-endian IEEE 754.
const std::string kOneMinusTwo("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);

TEST(Safetensors, ParsesAHandBuiltFile) {
  const fs::path path = safetensors_path("hand.safetensors");
  // Key order as HF writes it, padded with spaces to 8 bytes as the spec allows.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  write_file_atomic(path, file_bytes(header, kOneMinusTwo));

  const SafetensorsFile file(path);
  ASSERT_EQ(file.entries().size(), 1u);
  const TensorEntry& w = file.entry("w");
  EXPECT_EQ(w.dtype, "F32");
  EXPECT_EQ(w.shape, std::vector<std::int64_t>{2});
  EXPECT_EQ(w.begin, 0u);
  EXPECT_EQ(w.end, 8u);
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  const auto bytes = file.bytes(w);
  float values[2];
  ASSERT_EQ(bytes.size(), sizeof(values));
  std::memcpy(values, bytes.data(), sizeof(values));
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_THROW(file.entry("missing"), Error);
  fs::remove(path);
}

TEST(Safetensors, WriterEmitsTheExpectedBytes) {
  const fs::path path = safetensors_path("tiny.safetensors");
  write_safetensors(path, {{"w", "F32", {2}, as_bytes(kOneMinusTwo)}}, {});
  // nlohmann writes keys sorted; 54 bytes of JSON padded with 2 spaces to 56.
  const std::string header = R"({"w":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  ASSERT_EQ(header.size(), 54u);
  EXPECT_EQ(read_file(path), le_u64(56) + header + "  " + kOneMinusTwo);
  fs::remove(path);
}

TEST(Safetensors, RoundTripSortsNamesAndKeepsMetadata) {
  const fs::path path = safetensors_path("round.safetensors");
  const std::string ints("\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00", 12);
  const std::string flags("\x01\x00\x01", 3);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "é"}};
  write_safetensors(path,
                    {{"z.ints", "I32", {3, 1}, as_bytes(ints)},
                     {"a.flags", "BOOL", {3}, as_bytes(flags)},
                     {"m.empty", "F16", {0, 4}, {}}},
                    metadata);

  const std::string raw = read_file(path);
  std::uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i)
    header_length = (header_length << 8) | static_cast<unsigned char>(raw[i]);
  EXPECT_EQ(header_length % 8, 0u);

  const SafetensorsFile file(path);
  ASSERT_EQ(file.entries().size(), 3u);
  EXPECT_EQ(file.entries()[0].name, "a.flags");
  EXPECT_EQ(file.entries()[1].name, "m.empty");
  EXPECT_EQ(file.entries()[2].name, "z.ints");
  EXPECT_EQ(file.entry("a.flags").begin, 0u);  // data in name order
  EXPECT_EQ(file.entry("z.ints").shape, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(file.entry("m.empty").shape, (std::vector<std::int64_t>{0, 4}));
  const auto int_bytes = file.bytes(file.entry("z.ints"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(int_bytes.data()), int_bytes.size()), ints);
  const auto flag_bytes = file.bytes(file.entry("a.flags"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(flag_bytes.data()), flag_bytes.size()),
            flags);
  EXPECT_TRUE(file.bytes(file.entry("m.empty")).empty());
  EXPECT_EQ(file.metadata(), metadata);
  fs::remove(path);
}

// Writes `bytes` and expects opening it to fail with a message holding every fragment.
void expect_rejected(const std::string& name, const std::string& bytes,
                     std::initializer_list<std::string> fragments) {
  const fs::path path = safetensors_path(name);
  write_file_atomic(path, bytes);
  try {
    SafetensorsFile file(path);
    ADD_FAILURE() << name << ": opened without error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos) << name << ": " << message;
  }
  fs::remove(path);
}

std::string f32_entry(const std::string& name, int elements, int begin, int end) {
  return "\"" + name + R"(":{"dtype":"F32","shape":[)" + std::to_string(elements) +
         R"(],"data_offsets":[)" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

TEST(Safetensors, RejectsCorruptFilesNamingTheProblem) {
  const std::string eight(8, '\0');
  expect_rejected("short", "\x01\x00", {"too short"});
  expect_rejected("long_header", le_u64(1000) + "{}", {"header length", "1000"});
  expect_rejected("not_json", file_bytes("{\"w\":", ""), {"header", "not valid JSON"});
  expect_rejected("bad_utf8", file_bytes("{\"\xff\":1}", ""), {"not valid JSON"});
  expect_rejected("not_object", file_bytes("[1,2]", ""), {"not a JSON object"});
  expect_rejected("overlap",
                  file_bytes("{" + f32_entry("a", 2, 0, 8) + "," + f32_entry("b", 2, 4, 12) + "}",
                             std::string(12, '\0')),
                  {"b.data_offsets", "overlaps 'a'"});
  expect_rejected("gap",
                  file_bytes("{" + f32_entry("a", 2, 0, 8) + "," + f32_entry("b", 2, 12, 20) + "}",
                             std::string(20, '\0')),
                  {"b.data_offsets", "gap of 4 bytes after 'a'"});
  expect_rejected("leading_gap",
                  file_bytes("{" + f32_entry("a", 2, 4, 12) + "}", std::string(12, '\0')),
                  {"a.data_offsets", "gap of 4 bytes"});
  expect_rejected("out_of_range", file_bytes("{" + f32_entry("a", 2, 0, 8) + "}", "1234"),
                  {"a.data_offsets", "out of range"});
  expect_rejected("trailing",
                  file_bytes("{" + f32_entry("a", 2, 0, 8) + "}", std::string(12, '\0')),
                  {"cover 8 bytes", "holds 12"});
  expect_rejected("reversed", file_bytes("{" + f32_entry("a", 0, 8, 0) + "}", eight),
                  {"a.data_offsets", "after end"});
  expect_rejected("size", file_bytes("{" + f32_entry("a", 3, 0, 8) + "}", eight),
                  {"a.data_offsets", "spans 8 bytes", "need 12"});
  expect_rejected("dtype",
                  file_bytes(R"({"a":{"dtype":"F8","shape":[8],"data_offsets":[0,8]}})", eight),
                  {"a.dtype", "unknown dtype 'F8'"});
  expect_rejected("negative",
                  file_bytes(R"({"a":{"dtype":"U8","shape":[-8],"data_offsets":[0,8]}})", eight),
                  {"a.shape", "non-negative integer"});
  expect_rejected(
      "overflow",
      file_bytes(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                 eight),
      {"a.shape", "overflows"});
  expect_rejected("missing", file_bytes(R"({"a":{"shape":[8],"data_offsets":[0,8]}})", eight),
                  {"field 'a'", "missing 'dtype'"});
  expect_rejected(
      "duplicate",
      file_bytes("{" + f32_entry("a", 2, 0, 8) + "," + f32_entry("a", 2, 0, 8) + "}", eight),
      {"field 'a'", "duplicate tensor name"});
  expect_rejected("metadata", file_bytes(R"({"__metadata__":{"epoch":3}})", ""),
                  {"__metadata__.epoch", "expected a string"});
}

TEST(Safetensors, WriterRejectsInconsistentTensors) {
  const fs::path path = safetensors_path("reject.safetensors");
  const auto bytes = as_bytes(kOneMinusTwo);
  auto message = [&](const std::vector<RawTensor>& tensors) -> std::string {
    try {
      write_safetensors(path, tensors, {});
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message({{"w", "F32", {3}, bytes}}).find("8 bytes given"), std::string::npos);
  EXPECT_NE(message({{"w", "Q4", {2}, bytes}}).find("unknown dtype 'Q4'"), std::string::npos);
  EXPECT_NE(
      message({{"w", "F32", {2}, bytes}, {"w", "F32", {2}, bytes}}).find("duplicate tensor name"),
      std::string::npos);
  EXPECT_NE(message({{"__metadata__", "U8", {8}, bytes}}).find("reserved"), std::string::npos);
  EXPECT_FALSE(fs::exists(path));
}

TEST(Safetensors, FailedWriteLeavesTheExistingFileUntouched) {
  const fs::path path = safetensors_path("keep.safetensors");
  write_safetensors(path, {{"w", "F32", {2}, as_bytes(kOneMinusTwo)}}, {{"version", "1"}});
  const std::string before = read_file(path);
  // A valid tensor followed by a bad one: nothing may reach the file.
  EXPECT_THROW(write_safetensors(path,
                                 {{"a", "F32", {2}, as_bytes(kOneMinusTwo)},
                                  {"b", "I64", {2}, as_bytes(kOneMinusTwo)}},
                                 {{"version", "2"}}),
               Error);
  EXPECT_EQ(read_file(path), before);
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path().string().find(path.string() + ".tmp"), std::string::npos);
  fs::remove(path);
}

}  // namespace
}  // namespace strata
