#include "strata/eval/boundary_scores.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "strata/core/error.h"

namespace strata {

namespace {

void check_labels(std::span<const int> labels, const char* which) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (labels[i] != 0 && labels[i] != 1)
      throw Error(std::string("boundary scores: ") + which + " label " + std::to_string(i) + " is " +
                  std::to_string(labels[i]) + ", expected 0 or 1");
}

}  // namespace

BoundaryScores boundary_scores(std::span<const int> predicted, std::span<const int> gold) {
  if (predicted.size() != gold.size())
    throw Error("boundary scores: " + std::to_string(predicted.size()) + " predictions for " +
                std::to_string(gold.size()) + " gold labels");
  check_labels(predicted, "predicted");
  check_labels(gold, "gold");
  BoundaryScores s;
  for (std::size_t i = 0; i < gold.size(); ++i) {
    s.predicted += predicted[i];
    s.gold += gold[i];
    s.correct += predicted[i] & gold[i];
  }
  if (s.predicted > 0) s.precision = static_cast<double>(s.correct) / static_cast<double>(s.predicted);
  if (s.gold > 0) s.recall = static_cast<double>(s.correct) / static_cast<double>(s.gold);
  if (s.precision + s.recall > 0) s.f1 = 2 * s.precision * s.recall / (s.precision + s.recall);
  return s;
}

std::vector<int> boundaries_at(std::span<const float> probabilities, float threshold) {
  std::vector<int> out;
  out.reserve(probabilities.size());
  for (const float p : probabilities) out.push_back(p >= threshold ? 1 : 0);
  return out;
}

TunedThreshold tune_threshold(std::span<const float> probabilities, std::span<const int> gold) {
  if (probabilities.size() != gold.size())
    throw Error("threshold tuning: " + std::to_string(probabilities.size()) + " probabilities for " +
                std::to_string(gold.size()) + " gold labels");
  if (gold.empty()) throw Error("threshold tuning: no candidate boundaries to tune on");
  check_labels(gold, "gold");
  // Most probable first; each distinct probability is a cut predicting it and everything above.
  std::vector<std::size_t> order(gold.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return probabilities[a] > probabilities[b]; });
  std::size_t gold_total = 0;
  for (const int g : gold) gold_total += static_cast<std::size_t>(g);
  TunedThreshold best;
  double best_f1 = -1;
  std::size_t predicted = 0, correct = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    predicted += 1;
    correct += static_cast<std::size_t>(gold[order[i]]);
    if (i + 1 < order.size() && probabilities[order[i + 1]] == probabilities[order[i]]) continue;
    const double f1 = gold_total == 0 ? 0.0 : 2.0 * static_cast<double>(correct) /
                                                  static_cast<double>(predicted + gold_total);
    if (f1 > best_f1) {
      best_f1 = f1;
      best.threshold = probabilities[order[i]];
      best.scores = boundary_scores(boundaries_at(probabilities, best.threshold), gold);
    }
  }
  return best;
}

}  // namespace strata
