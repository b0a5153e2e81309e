#include "strata/eval/boundary_scores.h"

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

}  // namespace strata
