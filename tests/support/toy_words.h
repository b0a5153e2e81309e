#pragma once
// Seeded pseudo-random text over 16 command-line words, for the small datasets the CLI tests
// train on: the same seed gives the same words.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

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

// The toy summarisation set the CLI tests train on: DIR/train.jsonl (40 documents) and
// DIR/valid.jsonl (6): each document opens with its 4-word summary as a sentence, then 4
// sentences of `words` words.
inline void write_toy_summaries(const std::filesystem::path& dir, std::uint32_t seed, int words) {
  ToyWords toy(seed);
  for (const char* split : {"train", "valid"}) {
    std::ofstream out(dir / (std::string(split) + ".jsonl"));
    for (int i = 0; i < (split[0] == 't' ? 40 : 6); ++i) {
      const std::string summary = toy.words(4);
      std::string body = summary + ". ";
      for (int s = 0; s < 4; ++s) body += toy.words(words) + ". ";
      out << nlohmann::json{{"document", body}, {"summary", summary}}.dump() << "\n";
    }
  }
}

}  // namespace strata::test_support
