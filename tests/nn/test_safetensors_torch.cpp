#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "strata/core/error.h"
#include "strata/core/safetensors.h"
#include "strata/nn/safetensors_torch.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("strata_st_torch_" + std::to_string(::getpid()) + "_" + name);
}

TEST(SafetensorsTorch, RoundTripsEveryDtypeExactly) {
  const fs::path path = temp_path("dtypes.safetensors");
  torch::manual_seed(7);
  const at::Tensor floats = torch::randn({3, 5}, torch::kFloat64) * 1e3;
  const at::Tensor ints = torch::randint(-100, 100, {4, 2, 3}, torch::kInt64);
  const std::vector<std::pair<std::string, at::Tensor>> tensors = {
      {"f64", floats},
      {"f32", floats.to(torch::kFloat32)},
      {"f16", floats.to(torch::kFloat16)},
      {"bf16", floats.to(torch::kBFloat16)},
      {"i64", ints * static_cast<std::int64_t>(1e12)},  // beyond the range of int32
      {"i32", ints.to(torch::kInt32)},
      {"i16", ints.to(torch::kInt16)},
      {"i8", ints.to(torch::kInt8)},
      {"u8", (ints + 100).to(torch::kUInt8)},
      {"bool", ints > 0},
      {"empty", torch::zeros({0, 3}, torch::kFloat32)},
  };
  save_tensors(path, tensors, {{"format", "pt"}});

  const auto loaded = load_tensors(path);
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, expected] : tensors) {
    SCOPED_TRACE(name);
    const at::Tensor& actual = loaded.at(name);
    EXPECT_EQ(actual.scalar_type(), expected.scalar_type());
    EXPECT_EQ(actual.sizes(), expected.sizes());
    EXPECT_TRUE(torch::equal(actual, expected));
  }
  EXPECT_EQ(SafetensorsFile(path).metadata().at("format"), "pt");
  fs::remove(path);
}

TEST(SafetensorsTorch, SavesNonContiguousTensorsInLogicalOrder) {
  const fs::path path = temp_path("transposed.safetensors");
  const at::Tensor base = torch::arange(6, torch::kInt32).reshape({2, 3});
  const at::Tensor transposed = base.t();  // [[0,3],[1,4],[2,5]], strides (1, 3)
  ASSERT_FALSE(transposed.is_contiguous());
  save_tensors(path, {{"t", transposed}});

  const SafetensorsFile file(path);
  EXPECT_EQ(file.entry("t").shape, (std::vector<std::int64_t>{3, 2}));
  const auto bytes = file.bytes(file.entry("t"));
  std::vector<std::int32_t> values(bytes.size() / sizeof(std::int32_t));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  EXPECT_EQ(values, (std::vector<std::int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(torch::equal(load_tensors(path).at("t"), transposed));
  fs::remove(path);
}

TEST(SafetensorsTorch, ReadsAFileFromTheByteLevelWriter) {
  const fs::path path = temp_path("raw.safetensors");
  const std::vector<float> weights = {0.5f, -1.25f, 3.0f, 8.0f};
  const std::vector<std::int64_t> ids = {7, -9};
  write_safetensors(path,
                    {{"layer.weight", "F32", {2, 2}, std::as_bytes(std::span(weights))},
                     {"layer.ids", "I64", {2}, std::as_bytes(std::span(ids))}},
                    {});
  const auto loaded = load_tensors(path);
  EXPECT_TRUE(torch::equal(loaded.at("layer.weight"),
                           torch::tensor({0.5f, -1.25f, 3.0f, 8.0f}).reshape({2, 2})));
  EXPECT_TRUE(torch::equal(loaded.at("layer.ids"), torch::tensor({7, -9}, torch::kInt64)));
  fs::remove(path);
}

TEST(SafetensorsTorch, RejectsUnsupportedDtypesAndInvalidBools) {
  const fs::path path = temp_path("bad.safetensors");
  try {
    save_tensors(path, {{"z", torch::zeros({2}, torch::kComplexFloat)}});
    ADD_FAILURE() << "complex tensor saved";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("field 'z': unsupported dtype"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(path));

  const std::vector<std::uint8_t> not_bool = {0, 2};
  write_safetensors(path, {{"mask", "BOOL", {2}, std::as_bytes(std::span(not_bool))}}, {});
  EXPECT_THROW(load_tensors(path), Error);
  fs::remove(path);
}

}  // namespace
}  // namespace strata
