#pragma once
// Scores of classification and regression tasks (GLUE-style suites): accuracy, F1, the
// Matthews correlation and the Pearson and Spearman correlations, each defined as
// scikit-learn and SciPy define it, so that task scores compare with published ones.
// Labels are class ids; predicted[i] and gold[i] belong to example i. Every function throws
// strata::Error, naming itself, when the two sides differ in size or are empty.
#include <cstdint>
#include <span>

namespace strata {

// The fraction of examples whose predicted label equals the gold one.
double accuracy(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold);

// The unweighted mean over classes of F1 = 2 TP / (2 TP + FP + FN), over the classes that
// occur in predicted or gold (sklearn's f1_score(average="macro")): a class absent from both
// is left out of the mean. strata::Error for a label outside [0, classes).
double macro_f1(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold,
                std::int64_t classes);

// F1 of the class `positive` against all others; 0 when it occurs on neither side.
double binary_f1(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold,
                 std::int64_t positive);

// The multiclass Matthews correlation (Gorodkin's R_K, sklearn's matthews_corrcoef): with
// s examples, c of them right, p_k predictions and t_k gold labels of class k,
//   (c s - Σ p_k t_k) / sqrt((s² - Σ p_k²) (s² - Σ t_k²)),
// which for two classes is the usual (TP TN - FP FN) / sqrt(...). 0 when the denominator
// is 0 (one side names a single class). strata::Error for a label outside [0, classes).
double matthews_corrcoef(std::span<const std::int64_t> predicted,
                         std::span<const std::int64_t> gold, std::int64_t classes);

// The Pearson correlation of x and y; 0 when either side is constant (SciPy gives NaN).
// strata::Error for a value that is not finite, here and in spearman.
double pearson(std::span<const double> x, std::span<const double> y);

// The Pearson correlation of the ranks of x and y, tied values sharing their average rank
// (scipy.stats.spearmanr); 0 when either side is constant.
double spearman(std::span<const double> x, std::span<const double> y);

}  // namespace strata
