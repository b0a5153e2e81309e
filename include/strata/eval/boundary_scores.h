#pragma once
// Precision, recall and F1 of the boundary class of a binary segmentation (seed 003 §4.1
// validates topic segmentation by the F1 of boundaries), over candidate boundaries labelled
// 0 (no boundary) or 1 (boundary).
#include <cstddef>
#include <span>

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

}  // namespace strata
