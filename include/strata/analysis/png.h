#pragma once
// A minimal PNG encoder for palette images (colour type 3, 8 bits per pixel, no filtering),
// enough for the analyses' pictures (attention masks and maps, heatmaps, bias tables); zlib does
// the compression.
#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace strata::analysis {

using Rgb = std::array<std::uint8_t, 3>;

// `pixels` holds width * height palette indices, row by row; every index must be below
// palette.size() (1 to 256 entries). Returns the PNG file's bytes.
std::string encode_png(std::int64_t width, std::int64_t height, std::span<const Rgb> palette,
                       std::span<const std::uint8_t> pixels);

}  // namespace strata::analysis
