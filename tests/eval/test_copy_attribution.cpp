// Copy attribution (extract block against the rest of the input) on a hand-counted example,
// and its classes checked against copy_counts on each input alone.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/copy_rate.h"

namespace strata {
namespace {

using Tokens = std::vector<std::string>;
using Counts = std::vector<std::size_t>;

// Output: red fox jumps low red fox blue.
//   1-grams: red (extract only, twice), fox (both, twice), jumps (both), low (context only),
//            blue (novel).
//   2-grams: red fox (extract only, twice), fox jumps (both), jumps low (context only),
//            low red, fox blue (novel).
//   3-grams: red fox jumps (extract only), fox jumps low (context only), the other 3 novel.
//   4- to 7-grams: novel; 8-grams: none (the output has 7 words).
TEST(CopyAttribution, ClassifiesOutputNgramsByWhereTheyOccur) {
  const CopyAttribution counts = copy_attribution("Red fox jumps low, red fox blue.",
                                                  "red fox jumps high", "fox jumps low today", 8);
  EXPECT_EQ(counts.max_n(), 8);
  EXPECT_EQ(counts.extract_only, (Counts{2, 2, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(counts.context_only, (Counts{1, 1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(counts.both, (Counts{3, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(counts.novel, (Counts{1, 2, 3, 4, 3, 2, 1, 0}));
  EXPECT_EQ(counts.copied(1), 6u);
  EXPECT_DOUBLE_EQ(*counts.from_extract_share(1), 5.0 / 6);
  EXPECT_DOUBLE_EQ(*counts.extract_only_share(1), 2.0 / 6);
  EXPECT_DOUBLE_EQ(*counts.from_extract_share(2), 3.0 / 4);
  EXPECT_DOUBLE_EQ(*counts.extract_only_share(2), 2.0 / 4);
  EXPECT_DOUBLE_EQ(*counts.from_extract_share(3), 1.0 / 2);
  EXPECT_FALSE(counts.from_extract_share(4).has_value());  // nothing copied
  EXPECT_FALSE(counts.extract_only_share(8).has_value());  // no 8-gram at all
}

TEST(CopyAttribution, NgramAcrossTheJunctionIsNovel) {
  const CopyAttribution counts = copy_attribution("b c", "a b", "c d", 2);
  EXPECT_EQ(counts.extract_only, (Counts{1, 0}));
  EXPECT_EQ(counts.context_only, (Counts{1, 0}));
  EXPECT_EQ(counts.novel, (Counts{0, 1}));
}

TEST(CopyAttribution, EmptyOutputHasNoShares) {
  const CopyAttribution counts = copy_attribution("", "a", "a", 2);
  EXPECT_EQ(counts.novel, (Counts{0, 0}));
  EXPECT_EQ(counts.copied(1), 0u);
  EXPECT_FALSE(counts.from_extract_share(1).has_value());
}

TEST(CopyAttribution, ClassesAgreeWithCopyCountsOnEachInput) {
  std::mt19937 rng(11);
  const Tokens vocab{"a", "b", "c", "d", "e"};
  const auto random_tokens = [&](std::size_t size) {
    Tokens tokens;
    for (std::size_t i = 0; i < size; ++i) tokens.push_back(vocab[rng() % vocab.size()]);
    return tokens;
  };
  for (int trial = 0; trial < 100; ++trial) {
    const Tokens output = random_tokens(30), extract = random_tokens(20);
    const Tokens context = random_tokens(40);
    const CopyAttribution counts = copy_attribution(output, extract, context, 6);
    const CopyCounts in_extract = copy_counts(output, extract, 6);
    const CopyCounts in_context = copy_counts(output, context, 6);
    for (int n = 1; n <= 6; ++n) {
      const std::size_t i = n - 1;
      EXPECT_EQ(counts.extract_only[i] + counts.both[i], in_extract.copied[i]) << trial << " " << n;
      EXPECT_EQ(counts.context_only[i] + counts.both[i], in_context.copied[i]) << trial << " " << n;
      EXPECT_EQ(counts.copied(n) + counts.novel[i], in_extract.total[i]) << trial << " " << n;
    }
  }
}

TEST(CopyAttributionCorpus, PoolsCountsAcrossExamples) {
  CopyAttributionCorpus corpus(3);
  corpus.add(copy_attribution("red fox jumps low red fox blue", "red fox jumps high",
                              "fox jumps low today", 3));
  corpus.add(copy_attribution("x y", "z", "x y", 3));  // 1: x, y context only; 2: x y too
  EXPECT_EQ(corpus.examples(), 2u);
  const CopyAttribution& pooled = corpus.pooled();
  EXPECT_EQ(pooled.context_only, (Counts{3, 2, 1}));
  EXPECT_EQ(pooled.copied(1), 8u);
  // Pooled ratios: (2 + 3) / 8, not the mean of 5/6 and 0/2.
  EXPECT_DOUBLE_EQ(*pooled.from_extract_share(1), 5.0 / 8);
  EXPECT_DOUBLE_EQ(*pooled.extract_only_share(2), 2.0 / 5);
}

TEST(CopyAttributionCorpus, NoSharesBeforeAnythingIsCopied) {
  CopyAttributionCorpus corpus(2);
  corpus.add(copy_attribution("p q", "a", "b", 2));
  EXPECT_EQ(corpus.pooled().novel, (Counts{2, 1}));
  EXPECT_FALSE(corpus.pooled().from_extract_share(1).has_value());
}

TEST(CopyAttributionCorpus, RejectsBadOrders) {
  CopyAttributionCorpus corpus(3);
  EXPECT_THROW(corpus.add(copy_attribution("a", "a", "a", 2)), Error);
  EXPECT_THROW(CopyAttributionCorpus(0), Error);
  EXPECT_THROW(copy_attribution("a", "a", "a", 0), Error);
}

}  // namespace
}  // namespace strata
