#pragma once
// Precision, recall and F1 of the boundary class of a binary segmentation (seed 003 §4.1
// validates topic segmentation by the F1 of boundaries), over candidate boundaries labelled
// 0 (no boundary) or 1 (boundary).
#include <cstddef>
#include <span>
#include <vector>

namespace strata {

struct BoundaryScores {
  std::size_t predicted = 0;  // candidates predicted 1
  std::size_t gold = 0;       // candidates labelled 1
  std::size_t correct = 0;    // both
  // Each 0 where undefined: precision with nothing predicted, recall with no gold boundary,
  // F1 when precision + recall is 0.
  double precision = 0, recall = 0, f1 = 0;
};

// strata::Error when the spans differ in length or hold a value other than 0 and 1.
BoundaryScores boundary_scores(std::span<const int> predicted, std::span<const int> gold);

// Candidates whose boundary probability is at least `threshold` predicted 1.
std::vector<int> boundaries_at(std::span<const float> probabilities, float threshold);

// The threshold that maximises boundary F1 on a labelled (validation) set: among the distinct
// probabilities, the cut where the most probable candidates first give the best F1 (ties go
// to the higher threshold, which predicts fewer boundaries), with its scores there. A model
// whose 0.5 argmax predicts no boundary can still rank them; tuning the threshold on
// validation data, then applying it to the test set, is how its ranking is read (seed 003
// segments with a classifier; the threshold is the choice it leaves open). strata::Error on
// empty or mismatched input.
struct TunedThreshold {
  float threshold = 0.5f;
  BoundaryScores scores;
};
TunedThreshold tune_threshold(std::span<const float> probabilities, std::span<const int> gold);

}  // namespace strata
