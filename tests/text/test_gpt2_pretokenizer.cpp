#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "strata/core/jsonl.h"
#include "strata/text/gpt2_pretokenizer.h"

namespace strata {
namespace {

using Pieces = std::vector<std::string_view>;

TEST(Gpt2PreTokenizer, ContractionsPunctuationAndDoubleSpace) {
  // Two spaces before "It": the first stands alone, the second joins the word.
  EXPECT_EQ(gpt2_pretokenize("I'm here!  It's 2024."),
            (Pieces{"I", "'m", " here", "!", " ", " It", "'s", " 2024", "."}));
}

TEST(Gpt2PreTokenizer, ContractionsAreCaseSensitiveAndGreedy) {
  EXPECT_EQ(gpt2_pretokenize("we'll they're I'D"),
            (Pieces{"we", "'ll", " they", "'re", " I", "'", "D"}));
  // "'s" splits off even inside a word; a quote in a punctuation run stays in the run.
  EXPECT_EQ(gpt2_pretokenize("don't 'sam !!'s"), (Pieces{"don", "'t", " '", "sam", " !!'", "s"}));
}

TEST(Gpt2PreTokenizer, RunsOfSpacesAndTrailingSpaces) {
  EXPECT_EQ(gpt2_pretokenize("a   b  "), (Pieces{"a", "  ", " b", "  "}));
  EXPECT_EQ(gpt2_pretokenize("  leading"), (Pieces{" ", " leading"}));
  EXPECT_EQ(gpt2_pretokenize(" "), (Pieces{" "}));
}

TEST(Gpt2PreTokenizer, NewlinesAndTabs) {
  // A newline before a word is not a space: it cannot join the word and stands alone.
  EXPECT_EQ(gpt2_pretokenize("\n\nHello\n"), (Pieces{"\n", "\n", "Hello", "\n"}));
  EXPECT_EQ(gpt2_pretokenize("x\n\n\ny"), (Pieces{"x", "\n\n", "\n", "y"}));
  EXPECT_EQ(gpt2_pretokenize("\tb"), (Pieces{"\t", "b"}));
}

TEST(Gpt2PreTokenizer, DigitsSplitFromLettersAndPunctuation) {
  EXPECT_EQ(gpt2_pretokenize("abc123def 3.14 x2"),
            (Pieces{"abc", "123", "def", " 3", ".", "14", " x", "2"}));
}

TEST(Gpt2PreTokenizer, UnicodeLettersSpacesAndEmoji) {
  EXPECT_EQ(gpt2_pretokenize("naïve café 東京"), (Pieces{"naïve", " café", " 東京"}));
  // Emoji and their skin-tone modifiers are symbols: one run, joined to the space before.
  EXPECT_EQ(gpt2_pretokenize("hi 👍🏽 ok"), (Pieces{"hi", " 👍🏽", " ok"}));
  // NBSP and the ideographic space are whitespace but not " ", so they never join a word.
  EXPECT_EQ(gpt2_pretokenize("x\u00A0y"), (Pieces{"x", "\u00A0", "y"}));
  EXPECT_EQ(gpt2_pretokenize("a\u3000 b"), (Pieces{"a", "\u3000", " b"}));
  // Superscript two is a number (No); a combining accent (Mn) is not a letter.
  EXPECT_EQ(gpt2_pretokenize("x²"), (Pieces{"x", "²"}));
  EXPECT_EQ(gpt2_pretokenize("e\u0301t"), (Pieces{"e", "\u0301", "t"}));
}

TEST(Gpt2PreTokenizer, InvalidBytesAreSymbols) {
  EXPECT_EQ(gpt2_pretokenize("ab\xFF\xFE cd \x80"), (Pieces{"ab", "\xFF\xFE", " cd", " \x80"}));
}

TEST(Gpt2PreTokenizer, EmptyText) { EXPECT_TRUE(gpt2_pretokenize("").empty()); }

// Pieces made by Python's `regex` module with GPT-2's pattern (make_gpt2_fixture.py).
TEST(Gpt2PreTokenizer, MatchesPythonRegexReference) {
  JsonlReader reader(std::string(STRATA_FIXTURES_DIR) + "/text/gpt2_reference.jsonl");
  nlohmann::json line;
  int cases = 0;
  while (reader.next(line)) {
    const std::string text = line["text"];
    const auto expected = line["pieces"].get<std::vector<std::string>>();
    const Pieces pieces = gpt2_pretokenize(text);
    EXPECT_EQ(std::vector<std::string>(pieces.begin(), pieces.end()), expected) << text;
    ++cases;
  }
  EXPECT_GE(cases, 30);
}

TEST(Gpt2PreTokenizer, PiecesConcatenateToAnyInput) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::string text(rng() % 64, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    std::string joined;
    for (const std::string_view piece : gpt2_pretokenize(text)) {
      EXPECT_FALSE(piece.empty());
      joined += piece;
    }
    EXPECT_EQ(joined, text);
  }
}

}  // namespace
}  // namespace strata
