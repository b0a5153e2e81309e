#pragma once
// Two runs' tensor files compared value by value, for tests that expect the same training.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "strata/core/safetensors.h"

namespace strata::test_support {

// The largest |a - b| over the float32 tensors of two safetensors files, which must hold the
// same names and shapes (a failed expectation otherwise).
inline double max_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
  const SafetensorsFile first(a), second(b);
  EXPECT_EQ(first.entries().size(), second.entries().size()) << a << " vs " << b;
  double worst = 0;
  for (const TensorEntry& entry : first.entries()) {
    const TensorEntry& other = second.entry(entry.name);
    EXPECT_EQ(entry.shape, other.shape) << entry.name;
    if (entry.dtype != "F32" || entry.shape != other.shape) continue;
    const auto x = first.bytes(entry), y = second.bytes(other);
    for (std::size_t i = 0; i + 4 <= x.size(); i += 4) {
      float u = 0, v = 0;
      std::memcpy(&u, x.data() + i, 4);
      std::memcpy(&v, y.data() + i, 4);
      worst = std::max(worst, static_cast<double>(std::fabs(u - v)));
    }
  }
  return worst;
}

}  // namespace strata::test_support
