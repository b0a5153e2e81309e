#pragma once
// Small helpers shared by test files.
#include <cstddef>
#include <functional>
#include <string>

#include "strata/core/error.h"

namespace strata::test_support {

// The message of the strata::Error that `action` throws, or "(no error)".
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Non-overlapping occurrences of `needle` in `text`.
inline std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

}  // namespace strata::test_support
