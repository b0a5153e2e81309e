#pragma once
// Warnings for the user, on stderr: input that was repaired rather than rejected.
#include <cstddef>
#include <filesystem>
#include <string_view>

namespace strata {

// "strata: warning: MESSAGE"
void warn(std::string_view message);

// Reports that `count` invalid UTF-8 bytes of `file` were replaced by U+FFFD; silent when 0.
void report_invalid_utf8(const std::filesystem::path& file, std::size_t count);

}  // namespace strata
