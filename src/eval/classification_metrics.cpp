#include "strata/eval/classification_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "strata/core/error.h"

namespace strata {

namespace {

template <class T>
void check_sizes(const char* function, std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size())
    throw Error(std::string(function) + ": the two sides differ in size (" +
                std::to_string(a.size()) + " and " + std::to_string(b.size()) + ")");
  if (a.empty()) throw Error(std::string(function) + ": no examples");
}

// Sorting and means need numbers: a NaN or infinity is bad input, not a score.
void check_finite(const char* function, std::span<const double> x, std::span<const double> y) {
  check_sizes(function, x, y);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]))
      throw Error(std::string(function) + ": value " + std::to_string(i) + " is not finite");
}

// Per class: how often it was predicted, how often it is the gold label, how often both.
struct ClassCounts {
  std::vector<double> predicted, gold, correct;
};

ClassCounts count_classes(const char* function, std::span<const std::int64_t> predicted,
                          std::span<const std::int64_t> gold, std::int64_t classes) {
  check_sizes(function, predicted, gold);
  if (classes < 1) throw Error(std::string(function) + ": classes must be at least 1");
  const auto n = static_cast<std::size_t>(classes);
  ClassCounts counts{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t i = 0; i < gold.size(); ++i) {
    for (std::int64_t label : {predicted[i], gold[i]})
      if (label < 0 || label >= classes)
        throw Error(std::string(function) + ": label " + std::to_string(label) + " of example " +
                    std::to_string(i) + " is outside [0, " + std::to_string(classes) + ")");
    counts.predicted[static_cast<std::size_t>(predicted[i])] += 1;
    counts.gold[static_cast<std::size_t>(gold[i])] += 1;
    if (predicted[i] == gold[i]) counts.correct[static_cast<std::size_t>(gold[i])] += 1;
  }
  return counts;
}

double f1(double true_positives, double false_positives, double false_negatives) {
  const double denominator = 2 * true_positives + false_positives + false_negatives;
  return denominator == 0 ? 0.0 : 2 * true_positives / denominator;
}

// Ranks from 1, tied values sharing the mean of the ranks they span.
std::vector<double> average_ranks(std::span<const double> values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start + 1;
    while (end < order.size() && values[order[end]] == values[order[start]]) ++end;
    const double rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2;
    for (std::size_t k = start; k < end; ++k) ranks[order[k]] = rank;
    start = end;
  }
  return ranks;
}

double correlation(std::span<const double> x, std::span<const double> y) {
  const double n = static_cast<double>(x.size());
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double xy = 0, xx = 0, yy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mean_x, dy = y[i] - mean_y;
    xy += dx * dy;
    xx += dx * dx;
    yy += dy * dy;
  }
  if (xx == 0 || yy == 0) return 0.0;
  return std::clamp(xy / std::sqrt(xx * yy), -1.0, 1.0);
}

}  // namespace

double accuracy(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold) {
  check_sizes("accuracy", predicted, gold);
  std::size_t right = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) right += predicted[i] == gold[i];
  return static_cast<double>(right) / static_cast<double>(gold.size());
}

double macro_f1(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold,
                std::int64_t classes) {
  const ClassCounts counts = count_classes("macro_f1", predicted, gold, classes);
  double sum = 0;
  std::size_t present = 0;
  for (std::size_t k = 0; k < counts.gold.size(); ++k) {
    if (counts.predicted[k] == 0 && counts.gold[k] == 0) continue;
    sum += f1(counts.correct[k], counts.predicted[k] - counts.correct[k],
              counts.gold[k] - counts.correct[k]);
    ++present;
  }
  return sum / static_cast<double>(present);
}

double binary_f1(std::span<const std::int64_t> predicted, std::span<const std::int64_t> gold,
                 std::int64_t positive) {
  check_sizes("binary_f1", predicted, gold);
  double true_positives = 0, false_positives = 0, false_negatives = 0;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    const bool said = predicted[i] == positive, is = gold[i] == positive;
    true_positives += said && is;
    false_positives += said && !is;
    false_negatives += !said && is;
  }
  return f1(true_positives, false_positives, false_negatives);
}

double matthews_corrcoef(std::span<const std::int64_t> predicted,
                         std::span<const std::int64_t> gold, std::int64_t classes) {
  const ClassCounts counts = count_classes("matthews_corrcoef", predicted, gold, classes);
  const double s = static_cast<double>(gold.size());
  double correct = 0, predicted_gold = 0, predicted_squares = 0, gold_squares = 0;
  for (std::size_t k = 0; k < counts.gold.size(); ++k) {
    correct += counts.correct[k];
    predicted_gold += counts.predicted[k] * counts.gold[k];
    predicted_squares += counts.predicted[k] * counts.predicted[k];
    gold_squares += counts.gold[k] * counts.gold[k];
  }
  const double denominator = (s * s - predicted_squares) * (s * s - gold_squares);
  if (denominator == 0) return 0.0;
  return (correct * s - predicted_gold) / std::sqrt(denominator);
}

double pearson(std::span<const double> x, std::span<const double> y) {
  check_finite("pearson", x, y);
  return correlation(x, y);
}

double spearman(std::span<const double> x, std::span<const double> y) {
  check_finite("spearman", x, y);
  return correlation(average_ranks(x), average_ranks(y));
}

}  // namespace strata
