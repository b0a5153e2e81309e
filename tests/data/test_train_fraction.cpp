#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "strata/data/train_fraction.h"
#include "support/expect.h"

namespace strata {
namespace {

using test_support::error_of;

TEST(TrainFraction, KeepsTheRoundedShareAndAtLeastOne) {
  for (const auto& [fraction, kept] : std::vector<std::pair<double, std::size_t>>{
           {0.05, 50}, {0.10, 100}, {0.25, 250}, {0.5, 500}, {1.0, 1000}})
    EXPECT_EQ(train_fraction_indices(1000, fraction, 1).size(), kept) << fraction;
  EXPECT_EQ(train_fraction_indices(30, 0.05, 1).size(), 2u);  // 1.5 rounds to 2
  EXPECT_EQ(train_fraction_indices(7, 0.05, 1).size(), 1u);   // at least one
  EXPECT_EQ(train_fraction_indices(1, 0.01, 1).size(), 1u);
  EXPECT_TRUE(train_fraction_indices(0, 0.5, 1).empty());
}

TEST(TrainFraction, TheSubsetDependsOnTheSeedOnlyAndIsNested) {
  const auto a = train_fraction_indices(500, 0.1, 1);
  EXPECT_EQ(a, train_fraction_indices(500, 0.1, 1));
  EXPECT_NE(a, train_fraction_indices(500, 0.1, 2));
  const auto larger = train_fraction_indices(500, 0.25, 1);
  EXPECT_TRUE(std::includes(larger.begin(), larger.end(), a.begin(), a.end()));
  std::vector<std::size_t> all(500);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(train_fraction_indices(500, 1.0, 9), all);
}

TEST(TrainFraction, KeptExamplesKeepTheirOrder) {
  std::vector<int> examples(40);
  std::iota(examples.begin(), examples.end(), 100);
  const std::vector<int> kept = keep_train_fraction(examples, 0.25, 3);
  ASSERT_EQ(kept.size(), 10u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
  for (int example : kept)
    EXPECT_NE(std::find(examples.begin(), examples.end(), example), examples.end());
}

TEST(TrainFraction, ValuesOutsideZeroToOneAreRejected) {
  for (double bad : {0.0, -0.1, 1.5, std::nan("")})
    EXPECT_NE(error_of([&] { train_fraction_indices(10, bad, 1); }).find("(0, 1]"), std::string::npos) << bad;
}

}  // namespace
}  // namespace strata
