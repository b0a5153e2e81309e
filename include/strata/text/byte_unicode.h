#pragma once
// GPT-2's reversible map between bytes and printable Unicode characters (bytes_to_unicode in
// GPT-2's encoder.py). Byte-level BPE vocabularies spell every piece in this alphabet, so a
// piece such as "Ġthe" stands for the bytes " the".
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

// byte_to_unicode()[b] is the character that stands for byte b.
const std::array<char32_t, 256>& byte_to_unicode();
// The 256 bytes in the order GPT-2 lists them (printable ranges first), which is the order of
// the first 256 entries of its vocabulary.
const std::array<unsigned char, 256>& gpt2_byte_order();

// The bytes spelled in the byte alphabet, as UTF-8.
std::string bytes_to_symbols(std::string_view bytes);
// The bytes a piece stands for; nullopt if it holds a character outside the byte alphabet.
std::optional<std::string> symbols_to_bytes(std::string_view piece);

}  // namespace strata
