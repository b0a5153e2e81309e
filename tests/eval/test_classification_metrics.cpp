// Classification and correlation scores against values computed by hand from their formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/classification_metrics.h"

namespace strata {
namespace {

using Labels = std::vector<std::int64_t>;

// Binary, positive = 1: TP 3, TN 2, FP 1, FN 2.
const Labels kBinaryPredicted{1, 1, 1, 1, 0, 0, 0, 0};
const Labels kBinaryGold{1, 1, 1, 0, 1, 1, 0, 0};

// Three classes: gold counts t = (3, 2, 3), predicted counts p = (3, 3, 2), 6 of 8 right.
const Labels kThreePredicted{0, 1, 0, 1, 1, 2, 0, 2};
const Labels kThreeGold{0, 0, 0, 1, 1, 2, 2, 2};

TEST(Accuracy, CountsMatches) {
  EXPECT_DOUBLE_EQ(accuracy(kBinaryPredicted, kBinaryGold), 5.0 / 8);
  EXPECT_DOUBLE_EQ(accuracy(kThreePredicted, kThreeGold), 6.0 / 8);
}

TEST(BinaryF1, IsTwoTpOverTwoTpPlusErrors) {
  EXPECT_DOUBLE_EQ(binary_f1(kBinaryPredicted, kBinaryGold, 1), 6.0 / (6 + 1 + 2));
  // Class 0 as the positive one: TP 2, FP 2, FN 1.
  EXPECT_DOUBLE_EQ(binary_f1(kBinaryPredicted, kBinaryGold, 0), 4.0 / (4 + 2 + 1));
  EXPECT_DOUBLE_EQ(binary_f1(Labels{0, 0}, Labels{0, 0}, 1), 0.0);  // positive nowhere
}

TEST(MacroF1, AveragesThePresentClasses) {
  // Class 0: TP 2, FP 1, FN 1 -> 2/3. Class 1: TP 2, FP 1, FN 0 -> 4/5. Class 2: TP 2, FP 0,
  // FN 1 -> 4/5.
  const double expected = (2.0 / 3 + 0.8 + 0.8) / 3;
  EXPECT_DOUBLE_EQ(macro_f1(kThreePredicted, kThreeGold, 3), expected);
  // Class 3 occurs on neither side: it is left out, not counted as 0.
  EXPECT_DOUBLE_EQ(macro_f1(kThreePredicted, kThreeGold, 4), expected);
  // A class predicted but never gold counts with F1 0: classes 0 (F1 2/3) and 1 (F1 0).
  EXPECT_DOUBLE_EQ(macro_f1(Labels{0, 1}, Labels{0, 0}, 2), (2.0 / 3 + 0) / 2);
}

TEST(MatthewsCorrcoef, BinaryMatchesTheTwoByTwoFormula) {
  const double tp = 3, tn = 2, fp = 1, fn = 2;
  const double expected =
      (tp * tn - fp * fn) / std::sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn));  // 4/sqrt(240)
  EXPECT_NEAR(matthews_corrcoef(kBinaryPredicted, kBinaryGold, 2), expected, 1e-15);
  EXPECT_NEAR(expected, 0.2581988897, 1e-10);
}

TEST(MatthewsCorrcoef, ThreeClassesMatchGorodkinsFormula) {
  // (c s - Σ p_k t_k) / sqrt((s² - Σ p_k²)(s² - Σ t_k²)) = (6·8 - 21) / sqrt(42 · 42) = 27/42.
  EXPECT_NEAR(matthews_corrcoef(kThreePredicted, kThreeGold, 3), 27.0 / 42, 1e-15);
  EXPECT_NEAR(matthews_corrcoef(kThreePredicted, kThreeGold, 5), 27.0 / 42, 1e-15);
}

TEST(MatthewsCorrcoef, PerfectInvertedAndConstant) {
  EXPECT_DOUBLE_EQ(matthews_corrcoef(kThreeGold, kThreeGold, 3), 1.0);
  const Labels gold{0, 1, 1, 0, 1};
  const Labels inverted{1, 0, 0, 1, 0};
  EXPECT_DOUBLE_EQ(matthews_corrcoef(inverted, gold, 2), -1.0);
  EXPECT_EQ(matthews_corrcoef(Labels(5, 1), gold, 2), 0.0);  // zero denominator
  EXPECT_EQ(matthews_corrcoef(gold, Labels(5, 0), 2), 0.0);
}

TEST(Pearson, MatchesTheFormula) {
  // Deviations (-1.5, -0.5, 0.5, 1.5) and (-3, -1, 0, 4): 11 / sqrt(5 · 26).
  const std::vector<double> x{1, 2, 3, 4}, y{2, 4, 5, 9};
  EXPECT_NEAR(pearson(x, y), 11 / std::sqrt(130.0), 1e-15);
  const std::vector<double> down{8, 6, 4, 2};
  EXPECT_NEAR(pearson(x, down), -1.0, 1e-15);
  EXPECT_EQ(pearson(x, std::vector<double>(4, 3.0)), 0.0);
}

TEST(Spearman, TiesShareTheirAverageRank) {
  // Ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): 4.5 / sqrt(4.5 · 5) = 3 / sqrt(10).
  const std::vector<double> x{10, 20, 20, 30}, y{0.1, 0.7, 0.3, 0.9};
  EXPECT_NEAR(spearman(x, y), 3 / std::sqrt(10.0), 1e-15);
  // Monotone but not linear: rank correlation 1, Pearson below 1.
  const std::vector<double> a{1, 2, 3, 4}, cubes{1, 8, 27, 64};
  EXPECT_DOUBLE_EQ(spearman(a, cubes), 1.0);
  EXPECT_LT(pearson(a, cubes), 1.0);
  EXPECT_EQ(spearman(a, std::vector<double>(4, 7.0)), 0.0);
}

TEST(ClassificationMetrics, BadInputNamesTheFunction) {
  const Labels three{0, 1, 0}, two{0, 1};
  const auto message_of = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([&] { accuracy(three, two); }).find("accuracy"), std::string::npos);
  EXPECT_NE(message_of([&] { macro_f1(Labels{}, Labels{}, 2); }).find("macro_f1"), std::string::npos);
  EXPECT_NE(message_of([&] { binary_f1(three, two, 1); }).find("binary_f1"), std::string::npos);
  EXPECT_NE(message_of([&] { matthews_corrcoef(three, Labels{0, 2, 0}, 2); }).find("matthews_corrcoef"),
            std::string::npos);
  EXPECT_THROW(macro_f1(three, Labels{0, -1, 0}, 2), Error);
  EXPECT_THROW(matthews_corrcoef(three, three, 0), Error);
  const std::vector<double> x{1, 2}, y{1};
  EXPECT_NE(message_of([&] { pearson(x, y); }).find("pearson"), std::string::npos);
  EXPECT_NE(message_of([&] { spearman({}, {}); }).find("spearman"), std::string::npos);
  EXPECT_THROW(spearman(x, std::vector<double>{1, NAN}), Error);
}

}  // namespace
}  // namespace strata
