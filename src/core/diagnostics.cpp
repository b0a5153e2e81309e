#include "strata/core/diagnostics.h"

#include <cstdio>

#include <fmt/format.h>

namespace strata {

void warn(std::string_view message) {
  std::fprintf(stderr, "strata: warning: %.*s\n", static_cast<int>(message.size()), message.data());
}

void report_invalid_utf8(const std::filesystem::path& file, std::size_t count) {
  if (count == 0) return;
  warn(fmt::format("{}: {} invalid UTF-8 byte{} replaced by U+FFFD", file.string(), count,
                   count == 1 ? "" : "s"));
}

}  // namespace strata
