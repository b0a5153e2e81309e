// chrF / chrF++ against SacreBLEU's own published values and small cases derived by hand.
//
// sacrebleu is not installable here (no wheel, no network registry for it), so the reference
// values are the ones SacreBLEU publishes: its test suite (mjpost/sacrebleu
// test/test_chrf.py, which asserts them to 1e-4) and its README (corpus chrF2 = 59.73 for the
// README's example). The other expectations are derived by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/chrf.h"

namespace strata {
namespace {

constexpr double kSacreTol = 1e-4;  // test_chrf.py's EPSILON
constexpr double kChrfTol = 1e-9;

// One reference per hypothesis, as test_chrf.py's corpus cases give them.
std::vector<std::vector<std::string>> single_refs(const std::vector<std::string>& refs) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : refs) out.push_back({r});
  return out;
}

struct SacreCase {
  std::vector<std::string> hyps;
  std::vector<std::string> refs;
  double expected;
};

ChrfOptions beta3(bool eps_smoothing, bool whitespace = false) {
  ChrfOptions options;
  options.beta = 3;
  options.eps_smoothing = eps_smoothing;
  options.whitespace = whitespace;
  return options;
}

// test_chrf.py test_chrf: corpus_chrf(..., char_order=6, word_order=0, beta=3, eps_smoothing=True).
TEST(ChrfSacreBleu, EpsSmoothingCorpusCases) {
  const std::vector<SacreCase> cases{
      {{"abcdefg"}, {"hijklmnop"}, 0.0},
      {{"a"}, {"b"}, 0.0},
      {{""}, {"b"}, 0.0},
      {{""}, {"ref"}, 0.0},
      {{""}, {"reference"}, 0.0},
      {{"aa"}, {"ab"}, 8.3333},
      {{"a", "b"}, {"a", "c"}, 8.3333},
      {{"a"}, {"a"}, 16.6667},
      {{"a b c"}, {"a b c"}, 50.0},
      {{"a b c"}, {"abc"}, 50.0},
      {{" risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."},
       {"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."},
       63.361730},
      {{" Die    Beziehung zwischen  Obama und Netanjahu ist nicht gerade  freundlich. "},
       {"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."},
       64.1302698},
      {{"Niemand hat die Absicht, eine Mauer zu errichten"}, {"Niemand hat die Absicht, eine Mauer zu errichten"}, 100.0},
  };
  for (const SacreCase& c : cases)
    EXPECT_NEAR(corpus_chrf(c.hyps, single_refs(c.refs), beta3(true)), c.expected, kSacreTol) << c.hyps[0];
}

// test_chrf_eff_order: the same with eps_smoothing=False (SacreBLEU's default smoothing).
TEST(ChrfSacreBleu, EffectiveOrderCorpusCases) {
  const std::vector<SacreCase> cases{
      {{"a"}, {"a"}, 100.0},         {{""}, {"reference"}, 0.0},     {{"a b c"}, {"a b c"}, 100.0},
      {{"a b c"}, {"abc"}, 100.0},   {{""}, {"c"}, 0.0},             {{"a", "b"}, {"a", "c"}, 50.0},
      {{"aa"}, {"ab"}, 25.0},
  };
  for (const SacreCase& c : cases)
    EXPECT_NEAR(corpus_chrf(c.hyps, single_refs(c.refs), beta3(false)), c.expected, kSacreTol) << c.hyps[0];
}

// test_chrf_keep_whitespace: remove_whitespace=False, beta=3, default smoothing.
TEST(ChrfSacreBleu, KeepWhitespace) {
  EXPECT_NEAR(corpus_chrf({"Die Beziehung zwischen Obama und Netanjahu ist nicht gerade freundlich."},
                          {{"Das Verhältnis zwischen Obama und Netanyahu ist nicht gerade freundschaftlich."}},
                          beta3(false, true)),
              67.3481606, kSacreTol);
  EXPECT_NEAR(corpus_chrf({"risk assessment must be made of those who are qualified and expertise in the sector - these are the scientists ."},
                          {{"risk assessment has to be undertaken by those who are qualified and expert in that area - that is the scientists ."}},
                          beta3(false, true)),
              65.2414427, kSacreTol);
}

// test_chrf_sentence_level: sentence_chrf(hyp, refs, eps_smoothing=True), beta 2. Czech
// diacritics: characters are code points, not bytes.
TEST(ChrfSacreBleu, SentenceLevelCzech) {
  ChrfOptions options;
  options.eps_smoothing = true;
  EXPECT_NEAR(sentence_chrf("Co nás nejvíc trápí, protože lékaři si vybírají, kdo bude žít a kdo zemře.",
                            {"Nejvíce smutní jsme z toho, že musíme rozhodovat o tom, kdo bude žít a kdo zemře."}, options),
              39.14078509, kSacreTol);
  EXPECT_NEAR(sentence_chrf("Nebo prostě nemají vybavení, které by jim pomohlo, uvedli lékaři.",
                            {"A někdy nemáme ani potřebný materiál, abychom jim pomohli, popsali lékaři."}, options),
              31.22557079, kSacreTol);
  EXPECT_NEAR(sentence_chrf("Lapali po dechu, jejich životy skončily dřív, než skutečně začaly.",
                            {"Lapali po dechu a pak jejich život skončil - dřív, než skutečně mohl začít, připomněli."},
                            options),
              57.15704367, kSacreTol);
}

// README: CHRF().corpus_score(sys, refs) with two reference streams prints chrF2 = 59.73
// (the default options throughout).
TEST(ChrfSacreBleu, ReadmeCorpusTwoReferences) {
  const std::vector<std::string> sys{"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const std::vector<std::vector<std::string>> refs{{"The dog bit the man.", "The dog had bit the man."},
                                                   {"It was not unexpected.", "No one was surprised."},
                                                   {"The man bit him first.", "The man had bitten the dog."}};
  EXPECT_NEAR(corpus_chrf(sys, refs), 59.73, 0.005);
}

// Default chrF2 on "cat" against "cart" (orders with n-grams on both sides: 1..3):
//   1: hyp c a t, ref c a r t: 3 matches, P 3/3, R 3/4
//   2: hyp ca at, ref ca ar rt: 1 match,  P 1/2, R 1/3
//   3: hyp cat,   ref car art:  0,        P 0,   R 0
//   4: no hypothesis 4-gram: not an effective order; 5, 6: no reference n-gram
// P = (1 + 1/2 + 0) / 3 = 1/2, R = (3/4 + 1/3 + 0) / 3 = 13/36,
// F2 = 5 P R / (4 P + R) = (65/72) / (85/36) = 13/34.
TEST(Chrf, DefaultAveragesEffectiveOrdersThenTakesF) {
  const ChrfStats stats = chrf_segment_stats("cat", {"cart"});
  ASSERT_EQ(stats.orders.size(), 6u);
  EXPECT_EQ(stats.orders[0].hypothesis, 3u);
  EXPECT_EQ(stats.orders[0].reference, 4u);
  EXPECT_EQ(stats.orders[0].matches, 3u);
  EXPECT_EQ(stats.orders[2].matches, 0u);
  EXPECT_EQ(stats.orders[3].hypothesis, 0u);
  EXPECT_EQ(stats.orders[3].reference, 1u);
  EXPECT_NEAR(chrf_from_stats(stats), 100.0 * 13 / 34, kChrfTol);
  EXPECT_NEAR(sentence_chrf("cat", {"cart"}), 100.0 * 13 / 34, kChrfTol);
}

// A hypothesis's n-grams of an order the reference lacks are not counted: "abcd" has two
// 3-grams but "ab" has none, so order 3 records 0 hypothesis n-grams.
TEST(Chrf, HypothesisCountZeroWhereReferenceHasNoNgrams) {
  const ChrfStats stats = chrf_segment_stats("abcd", {"ab"});
  EXPECT_EQ(stats.orders[1].hypothesis, 3u);
  EXPECT_EQ(stats.orders[1].reference, 1u);
  EXPECT_EQ(stats.orders[2].hypothesis, 0u);
  EXPECT_EQ(stats.orders[2].reference, 0u);
}

// Corpus chrF sums the statistics first. Segments ("cat", "cart") and ("a", "a"):
//   1: 4 hyp, 5 ref, 4 matches -> P 1, R 4/5;  2: 2, 3, 1 -> 1/2, 1/3;  3: 1, 2, 0 -> 0, 0
// P = 1/2, R = (4/5 + 1/3) / 3 = 17/45, F2 = (5 * 1/2 * 17/45) / (2 + 17/45) = 85/214,
// not the mean of the sentence scores ((13/34 + 1) / 2).
TEST(Chrf, CorpusSumsStatisticsBeforeScoring) {
  const double corpus = corpus_chrf({"cat", "a"}, {{"cart"}, {"a"}});
  EXPECT_NEAR(corpus, 100.0 * 85 / 214, kChrfTol);
  EXPECT_GT(std::abs(corpus - (sentence_chrf("cat", {"cart"}) + sentence_chrf("a", {"a"})) / 2), 20.0);
}

// Characters are code points: "ée" against "éa" matches é (1-grams: P = R = 1/2) and no
// 2-gram (P = R = 0), so F = 1/4. Counted in bytes it would be 7/18.
TEST(Chrf, CharactersAreCodePoints) { EXPECT_NEAR(sentence_chrf("ée", {"éa"}), 25.0, kChrfTol); }

TEST(Chrf, LowercaseOptionFoldsUnicode) {
  ChrfOptions lower;
  lower.lowercase = true;
  EXPECT_NEAR(sentence_chrf("ÜBER alles", {"über Alles"}, lower), 100.0, kChrfTol);
  EXPECT_LT(sentence_chrf("ÜBER alles", {"über Alles"}), 50.0);
}

// The reference with the best F gives the segment's statistics.
TEST(Chrf, PicksTheBestReference) {
  EXPECT_NEAR(sentence_chrf("abc", {"xyz", "abc"}), 100.0, kChrfTol);
  EXPECT_EQ(chrf_segment_stats("abc", {"xyz", "abc"}).orders[0].matches, 3u);
}

// chrF++ (word_order 2) with one character order, "the cat sat." against "the cat sat":
//   chars (spaces removed): "thecatsat." 10, "thecatsat" 9, 9 matches -> P 9/10, R 1
//   words: "sat." splits into "sat" "." -> the cat sat . (4) vs the cat sat (3): P 3/4, R 1
//   word bigrams: "the cat" "cat sat" "sat ." vs 2 of them: P 2/3, R 1
// P = (9/10 + 3/4 + 2/3) / 3 = 139/180, R = 1, F2 = 5 P / (4 P + 1) = 695/736.
TEST(ChrfPlusPlus, WordNgramsSplitPunctuation) {
  ChrfOptions options;
  options.char_order = 1;
  options.word_order = 2;
  const ChrfStats stats = chrf_segment_stats("the cat sat.", {"the cat sat"}, options);
  ASSERT_EQ(stats.orders.size(), 3u);
  EXPECT_EQ(stats.orders[1].hypothesis, 4u);
  EXPECT_EQ(stats.orders[1].matches, 3u);
  EXPECT_EQ(stats.orders[2].hypothesis, 3u);
  EXPECT_EQ(stats.orders[2].matches, 2u);
  EXPECT_NEAR(chrf_from_stats(stats, options), 100.0 * 695 / 736, kChrfTol);
}

// Full chrF++ (6 character orders + 2 word orders) on the same pair: character order n has
// P = (10 - n) / (11 - n) and R = 1 (the reference is the hypothesis less its "."), so
// P = (9/10 + 8/9 + 7/8 + 6/7 + 5/6 + 4/5 + 3/4 + 2/3) / 8 and F2 = 5 P / (4 P + 1).
TEST(ChrfPlusPlus, DefaultOrders) {
  ChrfOptions options;
  options.word_order = 2;
  const double p = (9.0 / 10 + 8.0 / 9 + 7.0 / 8 + 6.0 / 7 + 5.0 / 6 + 4.0 / 5 + 3.0 / 4 + 2.0 / 3) / 8;
  EXPECT_NEAR(sentence_chrf("the cat sat.", {"the cat sat"}, options), 100 * 5 * p / (4 * p + 1), kChrfTol);
}

// "(hi)" splits into "(hi" and ")" (SacreBLEU issue #124): only the end is split off. Word
// unigrams only, against "( hi )" = "(" "hi" ")": 1 match, P 1/2, R 1/3, F2 = 5/14.
TEST(ChrfPlusPlus, SplitsTheEndBeforeTheStart) {
  ChrfOptions options;
  options.char_order = 0;
  options.word_order = 1;
  EXPECT_EQ(chrf_segment_stats("(hi)", {"( hi )"}, options).orders[0].hypothesis, 2u);
  EXPECT_NEAR(sentence_chrf("(hi)", {"( hi )"}, options), 100.0 * 5 / 14, kChrfTol);
}

TEST(Chrf, NamesAndSignature) {
  ChrfOptions options;
  EXPECT_EQ(chrf_name(options), "chrF2");
  EXPECT_EQ(chrf_signature(options, 1), "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:strata");
  options.word_order = 2;
  options.eps_smoothing = true;
  options.lowercase = true;
  EXPECT_EQ(chrf_name(options), "chrF2++");
  EXPECT_EQ(chrf_signature(options, 2), "nrefs:2|case:lc|eff:no|nc:6|nw:2|space:no|version:strata");
}

TEST(Chrf, RejectsBadInput) {
  EXPECT_THROW(corpus_chrf({"a", "b"}, {{"a"}}), Error);
  EXPECT_THROW(sentence_chrf("a", {}), Error);
  ChrfOptions none;
  none.char_order = 0;
  EXPECT_THROW(sentence_chrf("a", {"a"}, none), Error);
  ChrfStats a = chrf_segment_stats("a", {"a"});
  ChrfOptions plus;
  plus.word_order = 2;
  EXPECT_THROW(a += chrf_segment_stats("a", {"a"}, plus), Error);
}

}  // namespace
}  // namespace strata
