#pragma once
// Multi-task sampling of CA-MTL (thesis ch. 3): which task a batch comes from, and
// MT-Uncertainty (Algorithm 1), which draws b candidates from every task, runs the model on
// all of them and trains on the b it is least sure of. Pure index logic: the caller runs the
// model, computes entropies and gathers examples. Examples are drawn without replacement
// from per-task pools that reload when empty, as Algorithm 1 does (unselected candidates are
// consumed too). The draws come from splitmix64 (core/split_mix64.h), so they repeat on
// every platform, and a pool's state is two counters per task: a resumed run draws exactly
// what an uninterrupted one would.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

// Uniform: π = 1/T. SizeProportional: π_i = |D_i| / Σ|D| (Eq. 3.6). Temperature: π_i ∝
// |D_i|^α (Eq. 1.7, a generalisation of both: α = 1 is size-proportional, α = 0 uniform).
// MtUncertainty: Algorithm 1 as the thesis writes it; MtUncertaintyWeighted: as the public
// code computes it (see uncertainty_scores).
enum class TaskSampler { Uniform, SizeProportional, Temperature, MtUncertainty, MtUncertaintyWeighted };

// "uniform", "size", "temperature", "mt-uncertainty", "mt-uncertainty-weighted";
// strata::Error listing these for any other name.
TaskSampler task_sampler_from_name(std::string_view name);
std::string_view task_sampler_name(TaskSampler sampler);

// The probability of drawing each task under Uniform, SizeProportional or Temperature
// (which reads temperature_alpha; the others ignore it). strata::Error for no tasks, tasks
// with no examples at all, a negative or non-finite alpha, or an MT-Uncertainty sampler,
// which takes b examples from every task instead of drawing tasks.
std::vector<double> task_probabilities(TaskSampler sampler, std::span<const std::size_t> task_sizes,
                                       double temperature_alpha);

// Per task, a shuffled pool of its example indices [0, size), drawn without replacement.
// When a pool runs out it reloads: a fresh permutation, a function of (seed, task, number of
// reloads so far) alone. Tasks draw independently of each other.
class TaskPools {
 public:
  // strata::Error when a task has no examples.
  TaskPools(std::span<const std::size_t> task_sizes, std::uint64_t seed);

  // The next `count` indices of task `task`. A draw that empties the pool takes what is
  // left, reloads and goes on, so it repeats an index only when count exceeds the task's
  // size. strata::Error for a task out of range.
  std::vector<std::size_t> draw(std::size_t task, std::size_t count);

  // How often task `task`'s pool has reloaded (0 until a draw finds it empty).
  std::size_t reloads(std::size_t task) const;

  // {"tasks": [{"size": N, "reloads": R, "position": P}, ...]}: P indices of the current
  // permutation are used up.
  nlohmann::json state() const;
  // Continues from a state() of pools with the same sizes and seed. strata::Error naming the
  // field when it is missing or malformed, or when the task count or a size differs; the
  // pools are unchanged then.
  void restore(const nlohmann::json& state);

 private:
  struct Pool {
    std::size_t reloads = 0;
    std::size_t position = 0;
    std::vector<std::size_t> order;  // the current permutation
  };
  void shuffle(std::size_t task);

  std::uint64_t seed_;
  std::vector<Pool> pools_;
};

// One MT-Uncertainty candidate: an example drawn from `task`, the entropy H of the model's
// predicted distribution over the task's `classes` classes (classes = 1 for regression).
struct Candidate {
  std::size_t task = 0;
  double entropy = 0;
  std::size_t classes = 0;
};

// Each candidate's uncertainty score, higher = more uncertain.
//  - Paper (task_weighted = false), Eqs. 3.4-3.5: U = H / (Ĥ · log C), where Ĥ is the largest
//    over tasks of the mean entropy of the task's candidates. Ĥ is the same for every
//    candidate, so it cannot change the ranking.
//  - Public code (task_weighted = true): u = H / (log C + 1e-5), ū_t the mean u of task t's
//    candidates, score = u · ū_t / max_t ū_t: each candidate weighted by its task's relative
//    uncertainty.
// Regression (C = 1) has log C = 0: the paper variant's U is defined as 0 there, and the
// code variant gives H / 1e-5, which is 0 for the usual H = 0. So regression candidates rank
// last, unless the caller gives them an entropy and class count of their own (e.g. from
// binned targets); the thesis's code copies another task's entropies onto them instead.
// Scores are 0, not NaN, when every entropy is 0. strata::Error for an entropy that is
// negative or not finite, or a class count of 0.
std::vector<double> uncertainty_scores(std::span<const Candidate> candidates, bool task_weighted);

// Algorithm 1's selection: the positions in `candidates` of the b highest scores, best
// first; equal scores keep the lower position first. strata::Error when b exceeds the
// number of candidates, and as uncertainty_scores.
std::vector<std::size_t> select_uncertain(std::span<const Candidate> candidates, std::size_t b,
                                          bool task_weighted);

}  // namespace strata
