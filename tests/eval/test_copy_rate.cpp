// Copy rate / novel n-grams on hand-counted examples, and the hashed counting checked
// against plain string comparison.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/copy_rate.h"

namespace strata {
namespace {

using Tokens = std::vector<std::string>;

TEST(CopyRateTokens, LowercaseWordsSplitOnEverythingElse) {
  EXPECT_EQ(copy_rate_tokens("The cat's 3rd-place, ÉTÉ!"),
            (Tokens{"the", "cat", "s", "3rd", "place", "été"}));
  EXPECT_TRUE(copy_rate_tokens(" ,.;- ").empty());
}

TEST(CopyRate, CountsOutputNgramsFoundInTheSource) {
  const CopyCounts counts = copy_counts("the cat sat on the mat", "the cat lay on the mat", 7);
  // 1: all but "sat"; 2: "the cat", "on the", "the mat"; 3: "on the mat"; 4+: none.
  EXPECT_EQ(counts.copied, (std::vector<std::size_t>{5, 3, 1, 0, 0, 0, 0}));
  EXPECT_EQ(counts.total, (std::vector<std::size_t>{6, 5, 4, 3, 2, 1, 0}));
  EXPECT_DOUBLE_EQ(*counts.copy_rate(1), 5.0 / 6);
  EXPECT_DOUBLE_EQ(*counts.novel_fraction(2), 1 - 3.0 / 5);
  EXPECT_DOUBLE_EQ(*counts.copy_rate(6), 0.0);
  EXPECT_FALSE(counts.copy_rate(7).has_value());  // no 7-gram in a 6-word output
}

TEST(CopyRate, RepeatedOutputNgramsCountEachTime) {
  const CopyCounts counts = copy_counts("a a a", "a", 2);
  EXPECT_EQ(counts.copied, (std::vector<std::size_t>{3, 0}));
  EXPECT_EQ(counts.total, (std::vector<std::size_t>{3, 2}));
}

TEST(CopyRate, IgnoresCaseAndPunctuation) {
  const CopyCounts counts = copy_counts("The CAT!", "... the, cat", 2);
  EXPECT_DOUBLE_EQ(*counts.copy_rate(1), 1.0);
  EXPECT_DOUBLE_EQ(*counts.copy_rate(2), 1.0);
}

TEST(CopyRate, LongCopiedSpanCopiesEveryOrder) {
  Tokens source;
  for (int i = 0; i < 40; ++i) source.push_back("w" + std::to_string(i));
  const Tokens output(source.begin() + 5, source.begin() + 31);  // 26 tokens
  const CopyCounts counts = copy_counts(output, source, 25);
  for (int n = 1; n <= 25; ++n) {
    EXPECT_EQ(counts.total[n - 1], 27u - n) << n;
    EXPECT_DOUBLE_EQ(*counts.copy_rate(n), 1.0) << n;
  }
}

TEST(CopyRate, EmptyOutputHasNoRates) {
  const CopyCounts counts = copy_counts("", "some source", 3);
  for (int n = 1; n <= 3; ++n) EXPECT_FALSE(counts.copy_rate(n).has_value());
}

// Brute force: every output n-gram looked up among the source's as strings.
std::vector<std::size_t> copied_by_strings(const Tokens& out, const Tokens& src, int max_n) {
  std::vector<std::size_t> copied(max_n, 0);
  for (int n = 1; n <= max_n; ++n) {
    std::set<Tokens> seen;
    for (std::size_t i = 0; i + n <= src.size(); ++i) seen.emplace(src.begin() + i, src.begin() + i + n);
    for (std::size_t i = 0; i + n <= out.size(); ++i)
      copied[n - 1] += seen.count(Tokens(out.begin() + i, out.begin() + i + n));
  }
  return copied;
}

TEST(CopyRate, HashedCountsEqualStringCounts) {
  std::mt19937 rng(7);
  // A four-word vocabulary and copied spans give many partial and repeated matches.
  const Tokens vocab{"a", "b", "c", "d"};
  for (int trial = 0; trial < 200; ++trial) {
    Tokens source, output;
    for (int i = 0; i < 60; ++i) source.push_back(vocab[rng() % vocab.size()]);
    while (output.size() < 30) {
      if (rng() % 2) {
        const std::size_t start = rng() % 40, len = 1 + rng() % 15;
        output.insert(output.end(), source.begin() + start, source.begin() + start + len);
      } else {
        output.push_back(vocab[rng() % vocab.size()]);
      }
    }
    EXPECT_EQ(copy_counts(output, source, 25).copied, copied_by_strings(output, source, 25))
        << "trial " << trial;
  }
}

TEST(CopyRateCorpus, AveragesExamplesThatHaveTheOrder) {
  CopyRateCorpus corpus(4);
  corpus.add(copy_counts("x y", "x y", 4));    // 1: 2/2, 2: 1/1
  corpus.add(copy_counts("x z w", "x", 4));    // 1: 1/3, 2: 0/2, 3: 0/1
  EXPECT_EQ(corpus.examples(), 2u);
  EXPECT_DOUBLE_EQ(*corpus.copy_rate(1), (1.0 + 1.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(*corpus.copy_rate(2), 0.5);
  EXPECT_EQ(corpus.examples_with(3), 1u);
  EXPECT_DOUBLE_EQ(*corpus.novel_fraction(3), 1.0);
  EXPECT_FALSE(corpus.copy_rate(4).has_value());
  EXPECT_EQ(corpus.copied(1), 3u);  // pooled counts
  EXPECT_EQ(corpus.total(1), 5u);
}

TEST(CopyRateCorpus, RejectsBadOrders) {
  CopyRateCorpus corpus(3);
  EXPECT_THROW(corpus.add(copy_counts("a", "a", 2)), Error);
  EXPECT_THROW(CopyRateCorpus(0), Error);
  EXPECT_THROW(copy_counts("a", "a", 0), Error);
}

}  // namespace
}  // namespace strata
