#include "strata/text/byte_unicode.h"

#include "strata/core/utf8.h"

namespace strata {

namespace {

// bytes_to_unicode: the printable Latin-1 bytes stand for themselves; the others (controls,
// space, DEL, NBSP, soft hyphen...) are moved to 256 + n in their byte order, so that no
// piece contains whitespace or a control character.
struct Tables {
  std::array<char32_t, 256> to_unicode{};
  std::array<unsigned char, 256> order{};
  Tables() {
    auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 0;
    for (int b = 0; b < 256; ++b)
      if (printable(b)) {
        to_unicode[b] = static_cast<char32_t>(b);
        order[next++] = static_cast<unsigned char>(b);
      }
    int moved = 0;
    for (int b = 0; b < 256; ++b)
      if (!printable(b)) {
        to_unicode[b] = static_cast<char32_t>(256 + moved++);
        order[next++] = static_cast<unsigned char>(b);
      }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::array<char32_t, 256>& byte_to_unicode() { return tables().to_unicode; }
const std::array<unsigned char, 256>& gpt2_byte_order() { return tables().order; }

std::string bytes_to_symbols(std::string_view bytes) {
  const auto& map = byte_to_unicode();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) utf8_append(out, map[b]);
  return out;
}

std::optional<std::string> symbols_to_bytes(std::string_view piece) {
  // The alphabet spans U+0021..U+0143; invert it through a direct table.
  static const std::array<int, 0x144> from_unicode = [] {
    std::array<int, 0x144> inverse;
    inverse.fill(-1);
    for (int b = 0; b < 256; ++b) inverse[byte_to_unicode()[b]] = b;
    return inverse;
  }();
  std::string out;
  out.reserve(piece.size());
  for (std::size_t i = 0; i < piece.size();) {
    const std::size_t length = utf8_sequence_length(piece, i);
    if (length == 0) return std::nullopt;
    const char32_t c = utf8_decode_at(piece, i, length);
    if (c >= from_unicode.size() || from_unicode[c] < 0) return std::nullopt;
    out.push_back(static_cast<char>(from_unicode[c]));
    i += length;
  }
  return out;
}

}  // namespace strata
