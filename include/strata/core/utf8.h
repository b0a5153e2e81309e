#pragma once
// UTF-8 validation and repair. Invalid bytes are replaced by U+FFFD and counted, so that
// callers can report how much of an input was damaged instead of crashing on it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

bool is_valid_utf8(std::string_view s);

// Copy of `s` with every invalid byte replaced by U+FFFD; adds the number replaced to
// *replaced when it is given.
std::string sanitize_utf8(std::string_view s, std::size_t* replaced = nullptr);

// Decodes the valid sequence at s[i] (caller checked utf8_sequence_length > 0).
char32_t utf8_decode_at(std::string_view s, std::size_t i, std::size_t length);

void utf8_append(std::string& out, char32_t code_point);

// Whether the code point is in one of Unicode's punctuation categories (P*).
bool is_unicode_punctuation(char32_t code_point);

}  // namespace strata
