#pragma once
// strata::Error: the one exception type for bad input at a boundary. Its message is meant
// for a user: it names the file, line and field when they are known.
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace strata {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "FILE:LINE: field 'FIELD': MESSAGE" (line 0 and an empty field are left out).
Error error_at(const std::filesystem::path& file, std::size_t line, std::string_view field,
               std::string_view message);

}  // namespace strata
