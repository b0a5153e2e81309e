#pragma once
// Reads back the palette PNGs that strata/analysis/png.h writes (one IDAT chunk, no filtering),
// so that the figure tests can check pixels rather than bytes.
#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::test_support {

struct DecodedPng {
  std::uint32_t width = 0, height = 0;
  int depth = 0, colour_type = 0;
  std::vector<std::array<std::uint8_t, 3>> palette;
  std::vector<std::uint8_t> pixels;  // palette indices, row by row
  std::vector<std::string> chunks;   // chunk types in file order
  std::uint8_t at(std::uint32_t x, std::uint32_t y) const { return pixels.at(y * width + x); }
};

inline std::uint32_t read_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes.at(at + i));
  return value;
}

// Fails the test (and returns an empty image) when a signature, CRC or row filter is wrong.
inline DecodedPng decode_png(const std::string& bytes) {
  DecodedPng png;
  if (bytes.rfind("\x89PNG\r\n\x1a\n", 0) != 0) {
    ADD_FAILURE() << "no PNG signature";
    return {};
  }
  std::string packed;
  for (std::size_t at = 8; at + 12 <= bytes.size();) {
    const std::uint32_t length = read_u32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4), data = bytes.substr(at + 8, length);
    const auto* checked = reinterpret_cast<const Bytef*>(bytes.data() + at + 4);
    EXPECT_EQ(crc32(0L, checked, static_cast<uInt>(length + 4)), read_u32(bytes, at + 8 + length)) << type;
    png.chunks.push_back(type);
    if (type == "IHDR") {
      png.width = read_u32(data, 0);
      png.height = read_u32(data, 4);
      png.depth = static_cast<unsigned char>(data[8]);
      png.colour_type = static_cast<unsigned char>(data[9]);
    } else if (type == "PLTE") {
      for (std::size_t i = 0; i + 3 <= data.size(); i += 3)
        png.palette.push_back({static_cast<std::uint8_t>(data[i]), static_cast<std::uint8_t>(data[i + 1]),
                               static_cast<std::uint8_t>(data[i + 2])});
    } else if (type == "IDAT") {
      packed += data;
    }
    at += 12 + length;
  }
  std::vector<std::uint8_t> raw(static_cast<std::size_t>((png.width + 1) * png.height));
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(packed.data()), packed.size()) != Z_OK ||
      raw_size != raw.size()) {
    ADD_FAILURE() << "IDAT does not inflate to " << raw.size() << " bytes";
    return {};
  }
  for (std::uint32_t y = 0; y < png.height; ++y) {
    EXPECT_EQ(raw[y * (png.width + 1)], 0) << "row " << y << " is filtered";
    png.pixels.insert(png.pixels.end(), raw.begin() + y * (png.width + 1) + 1, raw.begin() + (y + 1) * (png.width + 1));
  }
  return png;
}

}  // namespace strata::test_support
