// BLEU on cases small enough to compute by hand: clipping, reference lengths, brevity
// penalty, each smoothing method, effective order and the degenerate statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/bleu.h"

namespace strata {
namespace {

constexpr double kTol = 1e-9;

BleuOptions raw_options(BleuSmooth smooth, double value) {
  BleuOptions options;  // SacreBLEU's raw_corpus_bleu
  options.tokenize = BleuTokenize::kNone;
  options.smooth = smooth;
  options.smooth_value = value;
  options.effective_order = true;
  return options;
}

BleuStats make_stats(std::size_t sys, std::size_t ref, std::array<std::size_t, 4> counts,
                     std::array<std::size_t, 4> totals) {
  BleuStats stats;
  stats.sys_len = sys;
  stats.ref_len = ref;
  stats.counts = counts;
  stats.totals = totals;
  return stats;
}

TEST(BleuStats, ClipsByTheLargestCountInAnyReference) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  // "the" ×4 against references holding it once and twice: 2 matches, not 3.
  const BleuStats stats = bleu_segment_stats("the the the the", {"the cat", "the the dog"}, options);
  EXPECT_EQ(stats.counts[0], 2u);
  EXPECT_EQ(stats.totals[0], 4u);
  EXPECT_EQ(stats.counts[1], 1u);  // "the the"
  EXPECT_EQ(stats.totals[1], 3u);
  EXPECT_EQ(stats.sys_len, 4u);
  EXPECT_EQ(stats.ref_len, 3u);  // 3 is closer to 4 than 2
}

TEST(BleuStats, ClosestReferenceLengthTiesGoToTheShorter) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  EXPECT_EQ(bleu_segment_stats("a b c", {"a b c d", "a b"}, options).ref_len, 2u);
  EXPECT_EQ(bleu_segment_stats("a b c", {"a b", "a b c d"}, options).ref_len, 2u);
  EXPECT_EQ(bleu_segment_stats("", {"x y", "x"}, options).ref_len, 1u);
}

TEST(BleuStats, AddUpOverSegments) {
  BleuStats a = make_stats(3, 4, {1, 2, 3, 4}, {5, 6, 7, 8});
  a += make_stats(1, 1, {1, 1, 1, 1}, {1, 1, 1, 1});
  EXPECT_EQ(a.sys_len, 4u);
  EXPECT_EQ(a.ref_len, 5u);
  EXPECT_EQ(a.counts[3], 5u);
  EXPECT_EQ(a.totals[0], 6u);
}

TEST(BleuScoring, NoSmoothingFromStatistics) {
  // Precisions 9/10, 7/8, 5/6, 3/4 and equal lengths: the geometric mean.
  BleuOptions options;
  options.smooth = BleuSmooth::kNone;
  const BleuScore score = bleu_from_stats(make_stats(11, 11, {9, 7, 5, 3}, {10, 8, 6, 4}), options);
  EXPECT_NEAR(score.score, 100 * std::pow(0.9 * 0.875 * (5.0 / 6) * 0.75, 0.25), kTol);
  EXPECT_NEAR(score.score, 83.75922397, 1e-6);
  EXPECT_NEAR(score.precisions[2], 100 * 5.0 / 6, kTol);
  EXPECT_DOUBLE_EQ(score.bp, 1.0);
  EXPECT_DOUBLE_EQ(score.ratio, 1.0);
}

TEST(BleuScoring, BrevityPenaltyWhenShorterThanReference) {
  BleuOptions options;
  const BleuScore score = bleu_from_stats(make_stats(6, 8, {6, 5, 4, 3}, {6, 5, 4, 3}), options);
  EXPECT_NEAR(score.bp, std::exp(1 - 8.0 / 6), kTol);
  EXPECT_NEAR(score.score, 100 * std::exp(1 - 8.0 / 6), kTol);
  EXPECT_NEAR(score.ratio, 0.75, kTol);
}

TEST(BleuScoring, ExpSmoothingHalvesEachZeroOrder) {
  // "a b c d" vs "a b x y": 2/4, 1/3, then 0/2 → 1/(2·2) and 0/1 → 1/(4·1).
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  const BleuScore score = corpus_bleu({"a b c d"}, {{"a b x y"}}, options);
  EXPECT_NEAR(score.precisions[2], 25.0, kTol);
  EXPECT_NEAR(score.precisions[3], 25.0, kTol);
  EXPECT_NEAR(score.score, 100 * std::pow(0.5 * (1.0 / 3) * 0.25 * 0.25, 0.25), kTol);
}

TEST(BleuScoring, FloorSmoothingUsesTheFloorOverTotal) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kFloor;  // default value 0.1
  const BleuScore score = corpus_bleu({"a b c d"}, {{"a b x y"}}, options);
  EXPECT_NEAR(score.precisions[2], 100 * 0.1 / 2, kTol);
  EXPECT_NEAR(score.precisions[3], 100 * 0.1 / 1, kTol);
  EXPECT_NEAR(score.score, 100 * std::pow(0.5 * (1.0 / 3) * 0.05 * 0.1, 0.25), kTol);
}

TEST(BleuScoring, AddKSmoothingSkipsUnigrams) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kAddK;  // k = 1 for n > 1
  const BleuScore score = corpus_bleu({"a b c d"}, {{"a b x y"}}, options);
  EXPECT_NEAR(score.precisions[0], 50.0, kTol);
  EXPECT_NEAR(score.score, 100 * std::pow(0.5 * 0.5 * (1.0 / 3) * 0.5, 0.25), kTol);
  EXPECT_EQ(score.counts[1], 1u);  // reported counts stay the raw ones
}

TEST(BleuScoring, NoSmoothingWithAZeroOrderScoresZero) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kNone;
  const BleuScore score = corpus_bleu({"a b c d"}, {{"a b x y"}}, options);
  EXPECT_EQ(score.score, 0.0);
  EXPECT_NEAR(score.precisions[1], 100.0 / 3, kTol);
}

TEST(BleuScoring, FloorOffsetZeroAndDefault) {
  const std::vector<std::string> hyp{"am I am a character sequence"};
  const std::vector<std::vector<std::string>> refs{{"I am a symbol string sequence a a"}};
  EXPECT_EQ(corpus_bleu(hyp, refs, raw_options(BleuSmooth::kFloor, 0.0)).score, 0.0);
  BleuOptions defaults = raw_options(BleuSmooth::kFloor, 0.0);
  defaults.smooth_value.reset();  // floor's default 0.1
  // Precisions 4/6, 2/5, 1/4, 0.1/3; BP exp(1 - 8/6).
  const double expected = std::exp(1 - 8.0 / 6) * std::pow((4.0 / 6) * 0.4 * 0.25 * (0.1 / 3), 0.25);
  EXPECT_NEAR(corpus_bleu(hyp, refs, defaults).score / 100, expected, kTol);
  EXPECT_NEAR(expected, 0.1555722182, 1e-9);
}

TEST(BleuScoring, DegenerateStatisticsScoreZero) {
  const BleuOptions floor = raw_options(BleuSmooth::kFloor, 0.0);
  EXPECT_EQ(bleu_from_stats(make_stats(0, 1, {0, 0, 0, 0}, {4, 4, 2, 1}), floor).score, 0.0);
  EXPECT_EQ(bleu_from_stats(make_stats(14, 10, {0, 0, 0, 0}, {10, 11, 12, 0}), floor).score, 0.0);
  EXPECT_EQ(bleu_from_stats(make_stats(0, 0, {0, 0, 0, 0}, {0, 0, 0, 0}), floor).score, 0.0);
  EXPECT_EQ(bleu_from_stats(make_stats(6, 6, {6, 5, 4, 0}, {6, 5, 4, 3}), floor).score, 0.0);
  const BleuScore empty = bleu_from_stats(make_stats(0, 5, {0, 0, 0, 0}, {0, 0, 0, 0}),
                                          raw_options(BleuSmooth::kFloor, 0.01));
  EXPECT_EQ(empty.score, 0.0);
  EXPECT_EQ(empty.bp, 0.0);     // c == 0
  EXPECT_EQ(empty.ratio, 0.0);  // 0 / 5
}

TEST(BleuEffectiveOrder, AveragesOnlyOrdersPresent) {
  const BleuOptions raw = raw_options(BleuSmooth::kFloor, 0.01);
  // One unigram, matched; BP exp(1 - 2/1).
  EXPECT_NEAR(corpus_bleu({"test"}, {{"a test"}}, raw).score / 100, std::exp(-1.0), kTol);
  EXPECT_NEAR(corpus_bleu({"a test"}, {{"a test"}}, raw).score / 100, 1.0, kTol);
  // 2/3, then 0.01/2 and 0.01/1 for the unmatched bigrams and trigram; no 4-grams.
  EXPECT_NEAR(corpus_bleu({"a little test"}, {{"a test"}}, raw).score / 100,
              std::cbrt((2.0 / 3) * 0.005 * 0.01), kTol);
}

TEST(BleuSentence, UsesEffectiveOrderUnlikeCorpus) {
  BleuOptions options;
  EXPECT_NEAR(sentence_bleu("a test", {"a test"}, options).score, 100.0, kTol);
  // At corpus level the missing 3- and 4-grams leave zero precisions: BLEU 0.
  EXPECT_EQ(corpus_bleu({"a test"}, {{"a test"}}, options).score, 0.0);
}

TEST(BleuCorpus, LowercaseOption) {
  BleuOptions options;
  const std::vector<std::string> hyp{"The Quick Brown Fox jumps"};
  const std::vector<std::vector<std::string>> refs{{"the quick brown fox jumps"}};
  EXPECT_NEAR(corpus_bleu(hyp, refs, options).score,
              100 * std::pow((1.0 / 5) * (1.0 / 8) * (1.0 / 12) * (1.0 / 16), 0.25), kTol);
  options.lowercase = true;
  EXPECT_NEAR(corpus_bleu(hyp, refs, options).score, 100.0, kTol);
}

TEST(BleuCorpus, SumsStatisticsBeforeScoring) {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  const BleuScore score =
      corpus_bleu({"a b c d e", "x y"}, {{"a b c d e"}, {"x z"}}, options);
  EXPECT_EQ(score.counts, (std::array<std::size_t, 4>{6, 4, 3, 2}));
  EXPECT_EQ(score.totals, (std::array<std::size_t, 4>{7, 5, 3, 2}));
  EXPECT_NEAR(score.score, 100 * std::pow((6.0 / 7) * 0.8 * 1.0 * 1.0, 0.25), kTol);
}

TEST(BleuCorpus, RejectsMismatchedReferences) {
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}}), Error);
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}, {"b", "c"}}), Error);
  EXPECT_THROW(corpus_bleu({"a"}, {{}}), Error);
}

TEST(BleuSignature, SacreBleuFields) {
  BleuOptions options;
  EXPECT_EQ(bleu_signature(options, 2), "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:strata");
  options.lowercase = true;
  options.effective_order = true;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kFloor;
  EXPECT_EQ(bleu_signature(options, 1),
            "nrefs:1|case:lc|eff:yes|tok:none|smooth:floor[0.10]|version:strata");
}

}  // namespace
}  // namespace strata
