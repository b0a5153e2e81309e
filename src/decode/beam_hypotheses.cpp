#include "beam_hypotheses.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace strata::decode {
namespace {

constexpr auto lower_score = [](const auto& a, const auto& b) { return a.score < b.score; };

}  // namespace

BeamHypotheses::BeamHypotheses(std::int64_t capacity, double length_penalty, bool early_stopping)
    : capacity_(static_cast<std::size_t>(capacity)),
      length_penalty_(length_penalty),
      early_stopping_(early_stopping) {}

double BeamHypotheses::score(double sum_log_prob, std::int64_t length) const {
  return sum_log_prob / std::pow(static_cast<double>(length), length_penalty_);
}

double BeamHypotheses::worst_score() const {
  return std::min_element(kept_.begin(), kept_.end(), lower_score)->score;
}

void BeamHypotheses::add(std::vector<std::int64_t> tokens, double sum_log_prob) {
  const double s = score(sum_log_prob, static_cast<std::int64_t>(tokens.size()));
  if (kept_.size() == capacity_) {
    if (s <= worst_score()) return;
    kept_.erase(std::min_element(kept_.begin(), kept_.end(), lower_score));
  }
  kept_.push_back({s, std::move(tokens)});
}

bool BeamHypotheses::is_done(double best_live_sum, std::int64_t live_length) const {
  if (kept_.size() < capacity_) return false;
  return early_stopping_ || worst_score() >= score(best_live_sum, live_length);
}

const std::vector<std::int64_t>& BeamHypotheses::best() const {
  return std::max_element(kept_.begin(), kept_.end(), lower_score)->tokens;
}

}  // namespace strata::decode
