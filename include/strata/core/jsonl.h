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
  // A longer line is refused (an error naming it), never read into memory: a 1 GB line is a
  // broken file, not a document (the longest book `strata data books` writes is ~50 MB).
  static constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

  // path "-" reads standard input; a line over max_line_bytes is an error.
  explicit JsonlReader(std::filesystem::path path, std::size_t max_line_bytes = kMaxLineBytes);

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
  std::size_t max_line_bytes_;
  std::size_t line_ = 0;
  std::size_t invalid_utf8_ = 0;
  bool reported_ = false;
};

// Reads every object of a JSONL file.
std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path);

}  // namespace strata
