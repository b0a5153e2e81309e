#pragma once
// What the fuzz targets share. A target hands its input to one of strata's parsers: a
// strata::Error is the parser refusing bad input, as it should; anything else that escapes (a
// crash, a sanitizer report, another exception, a hang) is a bug to fix.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "strata/core/error.h"
#include "strata/text/tokenizer.h"

namespace strata::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `parse`; strata::Error is the expected answer to bad input.
template <typename Parse>
int refusing_is_fine(Parse&& parse) {
  try {
    parse();
  } catch (const strata::Error&) {
  }
  return 0;
}

// A file of this process holding `bytes`, for parsers that read paths; removed with the object.
class TempFile {
 public:
  explicit TempFile(std::string_view bytes, const std::string& name = "input") {
    dir_ = std::filesystem::temp_directory_path() / ("strata-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = dir_ / name;
    std::ofstream(path_, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path dir_, path_;
};

// Splits an input in two at the first "\n----\n" (for formats that come in two files).
inline std::pair<std::string_view, std::string_view> two_parts(std::string_view text) {
  const auto at = text.find("\n----\n");
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + 6)};
}

// What a loaded tokenizer is for: a text with punctuation, a tab and accented letters encoded,
// and the ids decoded again.
inline void use_tokenizer(const Tokenizer& tokenizer) {
  tokenizer.decode(tokenizer.encode("Hello, world! ls(1) lists files.\n\tÜnïcödé"));
}

}  // namespace strata::fuzz
