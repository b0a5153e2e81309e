// Polysemy list outputs: splitting into items, Hit@n (items, not tokens), BLEU@n and chrF@n.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/list_items.h"

namespace strata {
namespace {

constexpr double kListTol = 1e-9;

// The thesis's example output (ch. 4, "Metrics"), accents restored.
const std::string kOutput = "aproximadamente, cerca de, alrededor de, casi, más o menos";

TEST(ListItems, SplitTrimDropEmpty) {
  EXPECT_EQ(split_list_items(kOutput),
            (std::vector<std::string>{"aproximadamente", "cerca de", "alrededor de", "casi", "más o menos"}));
  // The appendix's prompts print lists with spaces before commas; empty items go.
  EXPECT_EQ(split_list_items("aproximadamente , cerca de , ,  casi,"),
            (std::vector<std::string>{"aproximadamente", "cerca de", "casi"}));
  EXPECT_EQ(split_list_items(""), std::vector<std::string>{});
  EXPECT_EQ(split_list_items(" , "), std::vector<std::string>{});
}

// The thesis: Hit@3 matches "cerca de" and not "casi".
TEST(ListItems, HitAtNThesisExample) {
  const auto items = split_list_items(kOutput);
  EXPECT_TRUE(hit_at_n(items, "cerca de", 3));
  EXPECT_FALSE(hit_at_n(items, "casi", 3));
  EXPECT_TRUE(hit_at_n(items, "casi", 4));
  EXPECT_FALSE(hit_at_n(items, "cerca de", 1));
  EXPECT_TRUE(hit_at_n(items, "más o menos", 10));  // fewer items than n: all count
}

// Items, not tokens: "alrededor de" is the 3rd item, though its words are tokens 4 and 5.
TEST(ListItems, HitCountsItemsNotTokens) {
  const auto items = split_list_items(kOutput);
  EXPECT_TRUE(hit_at_n(items, "alrededor de", 3));
  EXPECT_FALSE(hit_at_n(items, "de", 5));  // a word inside an item is not an item
}

TEST(ListItems, HitNormalisation) {
  const auto items = split_list_items("Cerca  De, MÁS O MENOS, cerca.");
  EXPECT_TRUE(hit_at_n(items, "cerca de", 1));        // case and inner whitespace
  EXPECT_TRUE(hit_at_n(items, " más o menos ", 2));   // Unicode case folding, trimmed reference
  EXPECT_FALSE(hit_at_n(items, "mas o menos", 2));    // accents are kept
  EXPECT_FALSE(hit_at_n(items, "cerca", 3));          // so is punctuation
  EXPECT_EQ(normalize_list_item("  Alrededor \t DE "), "alrededor de");
}

// BLEU@n is SacreBLEU's sentence BLEU of the best item. The first item is SacreBLEU's own test
// case (test/test_sentence_bleu.py, issue #98: sentence_bleu = 8.493 with exp smoothing and
// 13a, asserted to 1e-3); the second item is the reference itself.
TEST(ListItems, BleuAtNIsTheBestSentenceBleu) {
  const std::string ref = "producţia de zahăr brut se exprimă în zahăr alb;";
  const std::vector<std::string> items{
      "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;", ref};
  EXPECT_NEAR(bleu_at_n(items, ref, 1), 8.493, 1e-3);
  EXPECT_NEAR(bleu_at_n(items, ref, 2), 100.0, kListTol);
}

// One-word item against a two-word reference: unigram precision 100 (effective order 1) and
// brevity penalty exp(1 - 2/1), so BLEU = 100 / e.
TEST(ListItems, BleuAtNOnShortItems) {
  const auto items = split_list_items("cerca, cerca de");
  EXPECT_NEAR(bleu_at_n(items, "cerca de", 1), 100 * std::exp(-1.0), kListTol);
  EXPECT_NEAR(bleu_at_n(items, "cerca de", 2), 100.0, kListTol);
  EXPECT_EQ(bleu_at_n({}, "cerca de", 3), 0.0);
}

// chrF@n: "cerca" against "cerca de" ("cercade" without spaces). Order n = 1..5: every
// hypothesis n-gram matches, P = 1, R = (6 - n) / (8 - n); order 6: no hypothesis 6-gram.
// R = (5/7 + 4/6 + 3/5 + 2/4 + 1/3) / 5, F2 = 5 R / (4 + R).
TEST(ListItems, ChrfAtN) {
  const auto items = split_list_items("cerca, cerca de");
  const double r = (5.0 / 7 + 4.0 / 6 + 3.0 / 5 + 2.0 / 4 + 1.0 / 3) / 5;
  EXPECT_NEAR(chrf_at_n(items, "cerca de", 1), 100 * 5 * r / (4 + r), kListTol);
  EXPECT_NEAR(chrf_at_n(items, "cerca de", 2), 100.0, kListTol);
}

TEST(ListItems, MeansOverSamples) {
  const std::vector<std::string> outputs{kOutput, "casi, cerca"};
  const std::vector<std::string> refs{"cerca de", "cerca de"};
  EXPECT_DOUBLE_EQ(mean_hit_at_n(outputs, refs, 3), 0.5);
  EXPECT_NEAR(mean_bleu_at_n(outputs, refs, 3), (100.0 + 100 * std::exp(-1.0)) / 2, kListTol);
  EXPECT_NEAR(mean_chrf_at_n(outputs, refs, 1),
              (chrf_at_n({"aproximadamente"}, "cerca de", 1) + chrf_at_n({"casi"}, "cerca de", 1)) / 2, kListTol);
}

TEST(ListItems, RejectsBadInput) {
  EXPECT_THROW(hit_at_n({"a"}, "a", 0), Error);
  EXPECT_THROW(bleu_at_n({"a"}, "a", 0), Error);
  EXPECT_THROW(mean_hit_at_n({"a"}, {}, 1), Error);
  EXPECT_THROW(mean_hit_at_n({}, {}, 1), Error);
}

}  // namespace
}  // namespace strata
