// The 13a and intl tokenisers and the Python string semantics behind them. Expected outputs
// are what SacreBLEU's regexes produce on the same lines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/bleu.h"

namespace strata {
namespace {

TEST(BleuTokenize13a, SplitsPunctuationAndSymbols) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("(x) [y] {z} @home #tag $5 50% ~a^b_c`d|e\\f/g"),
            "( x ) [ y ] { z } @ home # tag $ 5 50 % ~ a ^ b _ c ` d | e \\ f / g");
}

TEST(BleuTokenize13a, KeepsApostrophesAndWordHyphens) {
  EXPECT_EQ(tokenize_13a("It wasn't well-known x-1"), "It wasn't well-known x-1");
}

TEST(BleuTokenize13a, PeriodAndCommaBesideDigits) {
  EXPECT_EQ(tokenize_13a("3.14 and 1,000."), "3.14 and 1,000 .");
  EXPECT_EQ(tokenize_13a("end."), "end .");
  EXPECT_EQ(tokenize_13a("5."), "5 .");
  EXPECT_EQ(tokenize_13a("in 1999."), "in 1999 .");
  EXPECT_EQ(tokenize_13a("a...b"), "a . . . b");
  EXPECT_EQ(tokenize_13a("a,.b"), "a , . b");
}

TEST(BleuTokenize13a, DashAfterDigit) {
  EXPECT_EQ(tokenize_13a("1990-2000"), "1990 - 2000");
  EXPECT_EQ(tokenize_13a("it's 3.5-4.5 , ok"), "it's 3.5 - 4.5 , ok");
}

TEST(BleuTokenize13a, UnescapesEntitiesInOrder) {
  EXPECT_EQ(tokenize_13a("a &amp; b &lt;c&gt; &quot;q&quot;"), "a & b < c > \" q \"");
  // &quot; is replaced before &amp;, so "&amp;quot;" becomes the text "&quot;".
  EXPECT_EQ(tokenize_13a("&amp;quot;"), "& quot ;");
}

TEST(BleuTokenize13a, SkippedMarkersAndLineBreaks) {
  EXPECT_EQ(tokenize_13a("<skipped>hello"), "hello");
  EXPECT_EQ(tokenize_13a("co-\noperate a\nb"), "cooperate a b");
}

TEST(BleuTokenize13a, LeavesNonAsciiPunctuationAttached) {
  EXPECT_EQ(tokenize_13a("Ünïcödé… “quoted” — dash"), "Ünïcödé… “quoted” — dash");
  EXPECT_EQ(tokenize_13a("costs €5 + 3×4 = 12"), "costs €5 + 3×4 = 12");
}

TEST(BleuTokenize13a, NormalisesWhitespaceIncludingUnicodeSpaces) {
  EXPECT_EQ(tokenize_13a("  a \t b\u00a0c\u3000d  "), "a b c d");
  EXPECT_EQ(tokenize_13a(""), "");
}

TEST(BleuTokenizeIntl, SplitsUnicodePunctuationAndSymbols) {
  EXPECT_EQ(tokenize_intl("Ünïcödé… “quoted” — dash"), "Ünïcödé … “ quoted ” — dash");
  EXPECT_EQ(tokenize_intl("costs €5 + 3×4 = 12"), "costs € 5 + 3 × 4 = 12");
  EXPECT_EQ(tokenize_intl("It wasn't"), "It wasn ' t");
  EXPECT_EQ(tokenize_intl("1990-2000 well-known"), "1990-2000 well - known");
}

TEST(BleuTokenizeIntl, PunctuationBetweenDigitsStays) {
  EXPECT_EQ(tokenize_intl("3.14 and 1,000."), "3.14 and 1,000.");
  EXPECT_EQ(tokenize_intl("in 1999."), "in 1999.");  // mteval-v14 quirk, kept on purpose
}

TEST(BleuPreprocess, LowercasesStripsAndTokenizes) {
  BleuOptions options;
  options.lowercase = true;
  EXPECT_EQ(bleu_preprocess("The Dog, BARKED.  \n", options), "the dog , barked .");
  // Trailing whitespace goes before 13a, so a final "-\n" is not a line-break hyphen.
  options.lowercase = false;
  EXPECT_EQ(bleu_preprocess("end-\n", options), "end-");
  options.tokenize = BleuTokenize::kNone;
  EXPECT_EQ(bleu_preprocess(" a,  b.\tc ", options), "a, b. c");
}

TEST(BleuPythonStrings, SplitOnUnicodeWhitespace) {
  const std::vector<std::string_view> expected{"a", "b", "c", "d", "e"};
  EXPECT_EQ(split_python_whitespace("a\x1f" "b\u2028c\u0085d\u202f e"), expected);
  EXPECT_TRUE(split_python_whitespace(" \t\n").empty());
}

TEST(BleuPythonStrings, LowerLikePython) {
  EXPECT_EQ(python_lower("ÀÉÎ ABC"), "àéî abc");
  EXPECT_EQ(python_lower("İ"), "i\u0307");
  // Final sigma: ς at the end of a word, σ elsewhere, as str.lower() does.
  EXPECT_EQ(python_lower("ΟΔΟΣ ΣΟΣ Σ"), "οδος σος σ");
}

TEST(BleuOptionNames, ParseAndName) {
  EXPECT_EQ(parse_bleu_tokenize("intl"), BleuTokenize::kIntl);
  EXPECT_EQ(bleu_tokenize_name(BleuTokenize::k13a), "13a");
  EXPECT_EQ(parse_bleu_smooth("add-k"), BleuSmooth::kAddK);
  EXPECT_EQ(bleu_smooth_name(BleuSmooth::kFloor), "floor");
  EXPECT_THROW(parse_bleu_tokenize("moses"), Error);
  EXPECT_THROW(parse_bleu_smooth("laplace"), Error);
}

}  // namespace
}  // namespace strata
