// LexRank, TextRank and SumBasic on toys whose graphs and stationary vectors are worked out
// by hand. Words after stop words and stemming: "Apples, bananas and cherries." is
// {appl, banana, cherri}.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "strata/eval/sentence_ranking.h"

namespace strata {
namespace {

constexpr double kDamping = 0.85;

// A star: sentence 3 shares a word with each of the others, which share none.
const std::vector<std::string> kStar = {"Apples and dates.", "Bananas and figs.", "Cherries and grapes.",
                                        "Apples, bananas and cherries."};

TEST(LexRank, ScoresAStarAsItsStationaryVector) {
  // idf: log 2 for appl, banana, cherri (two sentences of four), log 4 = 2 log 2 for the rest.
  // cos(leaf, hub) = log² 2 / (√5 log 2 · √3 log 2) = 1/√15 ≈ 0.258 > 0.1; leaves: 0.
  // With self-links the hub's row is 1/4 each, a leaf's 1/2 to itself and the hub. By
  // symmetry every leaf has the same score x and the hub 1 - 3x; x = (1 - d)/4 + d(1 - 3x)/4
  // + d x/2 gives x = 1/(4 + d).
  const std::vector<double> scores = lexrank_scores(kStar);
  ASSERT_EQ(scores.size(), 4u);
  for (std::size_t leaf = 0; leaf < 3; ++leaf) EXPECT_NEAR(scores[leaf], 1 / (4 + kDamping), 1e-6);
  EXPECT_NEAR(scores[3], (1 + kDamping) / (4 + kDamping), 1e-6);
}

TEST(LexRank, LinksOnlyAboveTheThreshold) {
  LexRankOptions options;
  options.threshold = 0.25;  // below 1/√15: the star stays
  EXPECT_NEAR(lexrank_scores(kStar, options)[3], (1 + kDamping) / (4 + kDamping), 1e-6);
  options.threshold = 0.26;  // above it: every sentence only links to itself
  for (const double score : lexrank_scores(kStar, options)) EXPECT_NEAR(score, 0.25, 1e-6);
}

TEST(LexRank, TakesTheTopSentencesInDocumentOrderTiesToTheEarlier) {
  // The hub, then the first of the three tied leaves.
  EXPECT_EQ(lexrank(kStar, 2), (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(lexrank(kStar, 9), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(lexrank(kStar, 0).empty());
}

TEST(TextRank, ScoresAWeightedGraphAsItsStationaryVector) {
  // Words: {appl, banana, cherri}, {appl, banana, date}, {cherri, fig}. Similarities:
  // s01 = 2 / (log 3 + log 3), s02 = 1 / (log 3 + log 2), s12 = 0. Sentences 1 and 2 link to
  // 0 only; 0 splits its weight a = s01 / (s01 + s02) to 1 and 1 - a to 2. Then
  // p0 = (1 - d)/3 + d(p1 + p2) with p1 + p2 = 2(1 - d)/3 + d p0 gives
  // p0 = (1 + 2d) / (3(1 + d)), p1 = (1 - d)/3 + d a p0, p2 = (1 - d)/3 + d (1 - a) p0.
  const std::vector<std::string> sentences = {"Apples, bananas and cherries.", "Apples and bananas, dates.",
                                              "Cherries and figs."};
  const double d = kDamping, s01 = 2 / (2 * std::log(3.0)), s02 = 1 / (std::log(3.0) + std::log(2.0));
  const double a = s01 / (s01 + s02), p0 = (1 + 2 * d) / (3 * (1 + d));
  const std::vector<double> scores = textrank_scores(sentences);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_NEAR(scores[0], p0, 1e-6);
  EXPECT_NEAR(scores[1], (1 - d) / 3 + d * a * p0, 1e-6);
  EXPECT_NEAR(scores[2], (1 - d) / 3 + d * (1 - a) * p0, 1e-6);
  EXPECT_NEAR(std::accumulate(scores.begin(), scores.end(), 0.0), 1.0, 1e-12);
  EXPECT_EQ(textrank(sentences, 2), (std::vector<std::size_t>{0, 1}));
}

TEST(TextRank, SentencesWithoutEdgesJumpAnywhere) {
  // Two one-word sentences: log 1 + log 1 = 0, so no edge even though they share the word.
  for (const double score : textrank_scores(std::vector<std::string>{"Apples.", "Apples."}))
    EXPECT_NEAR(score, 0.5, 1e-12);
  const std::vector<std::string> disjoint = {"Apples here.", "Bananas there.", "Figs."};
  for (const double score : textrank_scores(disjoint)) EXPECT_NEAR(score, 1.0 / 3, 1e-12);
}

TEST(SumBasic, PicksByAverageProbabilityAndSquaresWhatItTook) {
  // Words: {appl, banana, cherri}, {appl, banana}, {date, fig, grape}, {appl, date}; ten in
  // all, p = .3 appl, .2 banana and date, .1 the rest. Means: .2, .25, .133, .25: 1 before
  // its tie 3. Squaring appl and banana (.09, .04): .077, -, .133, .145: 3. Squaring appl and
  // date (.0081, .04): .049, -, .08, -: 2, where without squaring 0 (.2) would come next.
  const std::vector<std::string> sentences = {"Apples, bananas and cherries.", "Apples and bananas.",
                                              "Dates, figs and grapes.", "Apples and dates."};
  EXPECT_EQ(sumbasic(sentences, 1), (std::vector<std::size_t>{1}));
  EXPECT_EQ(sumbasic(sentences, 2), (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(sumbasic(sentences, 3), (std::vector<std::size_t>{1, 2, 3}));
  EXPECT_EQ(sumbasic(sentences, 10), (std::vector<std::size_t>{0, 1, 2, 3}));
  // A sentence of stop words only scores 0 and comes last.
  EXPECT_EQ(sumbasic(std::vector<std::string>{"It is what it is.", "Apples."}, 1),
            (std::vector<std::size_t>{1}));
}

TEST(SumBasic, EmptyInputGivesNothing) {
  const std::vector<std::string> none;
  EXPECT_TRUE(lexrank_scores(none).empty());
  EXPECT_TRUE(textrank_scores(none).empty());
  EXPECT_TRUE(lexrank(none, 3).empty());
  EXPECT_TRUE(textrank(none, 3).empty());
  EXPECT_TRUE(sumbasic(none, 3).empty());
  EXPECT_TRUE(sumbasic(std::vector<std::string>{"Apples."}, 0).empty());
}

}  // namespace
}  // namespace strata
