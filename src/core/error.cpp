#include "strata/core/error.h"

#include <fmt/format.h>

namespace strata {

Error error_at(const std::filesystem::path& file, std::size_t line, std::string_view field,
               std::string_view message) {
  std::string text = file.string();
  if (line > 0) text += fmt::format(":{}", line);
  text += ": ";
  if (!field.empty()) text += fmt::format("field '{}': ", field);
  text += message;
  return Error(text);
}

}  // namespace strata
