#pragma once
// Seeded pseudo-random text over 16 command-line words, for the small datasets the CLI tests
// train on: the same seed gives the same words.
#include <cstdint>
#include <string>

namespace strata::test_support {

class ToyWords {
 public:
  explicit ToyWords(std::uint32_t seed) : state_(seed) {}
  const char* word() {
    static const char* const words[] = {"list", "copy", "files", "directory", "print", "network", "show", "the",
                                        "contents", "of", "a", "remove", "user", "manual", "page", "system"};
    state_ = state_ * 1103515245u + 12345u;
    return words[(state_ >> 16) % 16];
  }
  // `count` words separated by spaces.
  std::string words(int count) {
    std::string text;
    for (int w = 0; w < count; ++w) text += std::string(w ? " " : "") + word();
    return text;
  }

 private:
  std::uint32_t state_;
};

}  // namespace strata::test_support
