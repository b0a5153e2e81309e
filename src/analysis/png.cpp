#include "strata/analysis/png.h"

#include <zlib.h>

#include <string_view>

#include "strata/core/error.h"

namespace strata::analysis {

namespace {

void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xff));
}

// length, type, data, CRC over type + data.
void put_chunk(std::string& out, std::string_view type, std::string_view data) {
  put_u32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t type_at = out.size();
  out.append(type);
  out.append(data);
  const auto* bytes = reinterpret_cast<const Bytef*>(out.data() + type_at);
  put_u32(out, static_cast<std::uint32_t>(crc32(0L, bytes, static_cast<uInt>(type.size() + data.size()))));
}

}  // namespace

std::string encode_png(std::int64_t width, std::int64_t height, std::span<const Rgb> palette,
                       std::span<const std::uint8_t> pixels) {
  if (width <= 0 || height <= 0 || width > 0x7fffffff || height > 0x7fffffff)
    throw Error("PNG: image size must be positive");
  if (palette.empty() || palette.size() > 256) throw Error("PNG: the palette needs 1 to 256 colours");
  if (static_cast<std::int64_t>(pixels.size()) != width * height)
    throw Error("PNG: pixel count does not match the image size");

  // Each row is preceded by its filter type (0: none).
  std::string raw;
  raw.reserve(static_cast<std::size_t>((width + 1) * height));
  for (std::int64_t y = 0; y < height; ++y) {
    raw.push_back('\0');
    for (std::int64_t x = 0; x < width; ++x) {
      const std::uint8_t index = pixels[static_cast<std::size_t>(y * width + x)];
      if (index >= palette.size()) throw Error("PNG: pixel colour index outside the palette");
      raw.push_back(static_cast<char>(index));
    }
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()),
                Z_BEST_COMPRESSION) != Z_OK)
    throw Error("PNG: zlib compression failed");
  packed.resize(packed_size);

  std::string header;
  put_u32(header, static_cast<std::uint32_t>(width));
  put_u32(header, static_cast<std::uint32_t>(height));
  header += std::string{'\x08', '\x03', '\0', '\0', '\0'};  // depth 8, palette, deflate, no filter, no interlace
  std::string colours;
  for (const Rgb& c : palette) colours.append(reinterpret_cast<const char*>(c.data()), c.size());

  std::string out = "\x89PNG\r\n\x1a\n";
  put_chunk(out, "IHDR", header);
  put_chunk(out, "PLTE", colours);
  put_chunk(out, "IDAT", packed);
  put_chunk(out, "IEND", "");
  return out;
}

}  // namespace strata::analysis
