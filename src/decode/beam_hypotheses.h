#pragma once
// The finished hypotheses of one input in beam search: the `capacity` best by
// length-penalised score, and whether a live beam could still enter them.
#include <cstdint>
#include <vector>

namespace strata::decode {

class BeamHypotheses {
 public:
  BeamHypotheses(std::int64_t capacity, double length_penalty, bool early_stopping);

  // sum_log_prob / length^length_penalty, length = generated tokens (eos included).
  double score(double sum_log_prob, std::int64_t length) const;
  // tokens: the generated tokens; kept when there is room or it beats the worst kept.
  void add(std::vector<std::int64_t> tokens, double sum_log_prob);
  // Full, and either early_stopping or the best live beam (its sum and current length)
  // scores no better than the worst kept (HF's heuristic: it scores the live beam at its
  // current length, not at the length it would finish with).
  bool is_done(double best_live_sum, std::int64_t live_length) const;
  // The best kept hypothesis (the first added among equals); needs one.
  const std::vector<std::int64_t>& best() const;

 private:
  struct Hypothesis {
    double score;
    std::vector<std::int64_t> tokens;
  };
  double worst_score() const;

  std::size_t capacity_;
  double length_penalty_;
  bool early_stopping_;
  std::vector<Hypothesis> kept_;  // in order of arrival
};

}  // namespace strata::decode
