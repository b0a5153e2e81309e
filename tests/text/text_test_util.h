#pragma once
// Helpers shared by the tokenizer tests: a scratch directory and a generated corpus.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strata/text/tokenizer.h"

namespace strata::test {

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("strata-text-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Deterministic English-like sentences, some with section markers: words from a fixed list
// mixed with made-up words of two or three syllables, so that the vocabulary is rich enough
// for a few hundred pieces.
inline std::vector<std::string> generated_sentences(int count) {
  static const char* const words[] = {
      "the",     "model",      "reads",     "long",     "documents", "with",     "sections",
      "and",     "paragraphs", "attention", "follows",  "structure", "of",       "each",
      "section", "summary",    "is",        "short",    "tokens",    "sentence", "heading",
      "tree",    "level",      "training",  "data",     "results",   "show",     "that",
      "a",       "sparse",     "pattern",   "saves",    "memory",    "time",     "we",
      "report",  "scores",     "on",        "datasets", "news",      "science",  "papers",
      "naïve",   "café",       "2024",      "3.14"};
  static const char* const syllables[] = {"ka", "lo",  "mi",  "ter", "son", "dra",  "vel", "quin",
                                          "ar", "po",  "shu", "lex", "ny",  "bor",  "tra", "ge",
                                          "fi", "wal", "ung", "ce",  "mo",  "rith", "zen", "pli"};
  constexpr std::uint32_t kWords = sizeof(words) / sizeof(words[0]);
  constexpr std::uint32_t kSyllables = sizeof(syllables) / sizeof(syllables[0]);
  std::uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::vector<std::string> sentences;
  for (int i = 0; i < count; ++i) {
    std::string sentence = (i % 7 == 0) ? "[SEC] " : "";
    const std::uint32_t length = 5 + next() % 12;
    for (std::uint32_t w = 0; w < length; ++w) {
      if (w > 0) sentence += ' ';
      if (next() % 3 == 0) {
        for (std::uint32_t k = 2 + next() % 2; k > 0; --k)
          sentence += syllables[next() % kSyllables];
      } else {
        sentence += words[next() % kWords];
      }
    }
    sentences.push_back(sentence + ".");
  }
  return sentences;
}

// Both trained kinds number specials in SpecialTokens::all() order:
// <s> </s> <pad> <unk> [SEP] <mask> [SEC] [SEC-L1] ...
inline void expect_standard_special_ids(const Tokenizer& t) {
  EXPECT_EQ(t.bos_id(), 0);
  EXPECT_EQ(t.eos_id(), 1);
  EXPECT_EQ(t.pad_id(), 2);
  EXPECT_EQ(t.piece_to_id("<unk>"), 3);
  EXPECT_EQ(t.sep_id(), 4);
  EXPECT_EQ(t.mask_id(), 5);
  EXPECT_EQ(t.piece_to_id("[SEC]"), 6);
}

// load_tokenizer's error for `path`, or "(no error)".
inline std::string load_error(const std::filesystem::path& path) {
  try {
    load_tokenizer(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace strata::test
