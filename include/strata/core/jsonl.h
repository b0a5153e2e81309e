#pragma once
// Reading JSON Lines with errors that name file, line and field.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata {

class JsonlReader {
 public:
  // path "-" reads standard input.
  explicit JsonlReader(std::filesystem::path path);

  // Next non-blank line parsed as a JSON object; false at end of file. Throws
  // strata::Error("FILE:LINE: ...") for malformed JSON or a line that is not an object.
  // Invalid UTF-8 is replaced by U+FFFD, counted in invalid_utf8_bytes() and reported as a
  // warning on stderr when the end of the file is reached.
  bool next(nlohmann::json& object);

  std::size_t line() const { return line_; }
  const std::filesystem::path& path() const { return path_; }
  std::size_t invalid_utf8_bytes() const { return invalid_utf8_; }

  // An Error at the current line naming `field`.
  Error error(std::string_view field, std::string_view message) const;

  // Typed field access that throws error(field, ...) when missing or of the wrong type.
  std::string string_field(const nlohmann::json& object, std::string_view field) const;
  std::vector<std::string> string_list_field(const nlohmann::json& object,
                                             std::string_view field) const;

 private:
  std::filesystem::path path_;
  std::ifstream file_;
  std::istream* in_;
  std::size_t line_ = 0;
  std::size_t invalid_utf8_ = 0;
  bool reported_ = false;
};

// Reads every object of a JSONL file.
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path);

}  // namespace strata
