#include <gtest/gtest.h>

#include <set>

#include "strata/text/byte_unicode.h"

namespace strata {
namespace {

TEST(ByteUnicode, MatchesGpt2Table) {
  const auto& map = byte_to_unicode();
  EXPECT_EQ(map['!'], U'!');
  EXPECT_EQ(map['~'], U'~');
  EXPECT_EQ(map[0xA1], U'\u00A1');
  EXPECT_EQ(map[0xFF], U'\u00FF');
  // Non-printable bytes move to 256 + n in byte order: 0x00 -> U+0100, space -> U+0120 'Ġ',
  // newline -> U+010A 'Ċ', DEL -> U+0121, NBSP -> U+0142, soft hyphen -> U+0143.
  EXPECT_EQ(map[0x00], U'\u0100');
  EXPECT_EQ(map[' '], U'\u0120');
  EXPECT_EQ(map['\n'], U'\u010A');
  EXPECT_EQ(map[0x7F], U'\u0121');
  EXPECT_EQ(map[0xA0], U'\u0142');
  EXPECT_EQ(map[0xAD], U'\u0143');
  EXPECT_EQ(std::set<char32_t>(map.begin(), map.end()).size(), 256u);
}

TEST(ByteUnicode, Gpt2OrderListsPrintableBytesFirst) {
  const auto& order = gpt2_byte_order();
  EXPECT_EQ(order[0], '!');
  EXPECT_EQ(order[93], '~');
  EXPECT_EQ(order[94], 0xA1);
  EXPECT_EQ(order[188], 0x00);  // the first moved byte
  EXPECT_EQ(order[255], 0xAD);
  EXPECT_EQ(std::set<unsigned char>(order.begin(), order.end()).size(), 256u);
}

TEST(ByteUnicode, SymbolsRoundTripEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(bytes_to_symbols(" the"), "\u0120the");
  EXPECT_EQ(symbols_to_bytes(bytes_to_symbols(all)), all);
  EXPECT_EQ(symbols_to_bytes("\u0120caf\u00C3\u00A9"), " caf\xC3\xA9");
}

TEST(ByteUnicode, CharactersOutsideTheAlphabetAreRejected) {
  EXPECT_FALSE(symbols_to_bytes("é東").has_value());
  EXPECT_FALSE(symbols_to_bytes(" ").has_value());  // a raw space is never spelled
  EXPECT_FALSE(symbols_to_bytes("\xFF").has_value());
}

}  // namespace
}  // namespace strata
