#include "strata/data/task_sampling.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"

namespace strata {

namespace {

constexpr std::array<std::pair<TaskSampler, std::string_view>, 5> kSamplerNames{{
    {TaskSampler::Uniform, "uniform"},
    {TaskSampler::SizeProportional, "size"},
    {TaskSampler::Temperature, "temperature"},
    {TaskSampler::MtUncertainty, "mt-uncertainty"},
    {TaskSampler::MtUncertaintyWeighted, "mt-uncertainty-weighted"},
}};

// What mtl_trainer.py adds to log C, which keeps regression (log 1 = 0) from dividing by 0.
constexpr double kLogClassesEpsilon = 1e-5;

const char* const kStateContext = "task pools state: field ";

// A count in a saved state: a non-negative integer, or strata::Error naming the field.
std::size_t state_count(const nlohmann::json& task, std::size_t index, const char* name) {
  const auto it = task.find(name);
  if (it == task.end() || !it->is_number_unsigned())
    throw Error(std::string(kStateContext) + "'tasks[" + std::to_string(index) + "]." + name +
                "' is missing or not a non-negative integer");
  return it->get<std::size_t>();
}

void check_candidates(std::span<const Candidate> candidates) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!std::isfinite(candidates[i].entropy) || candidates[i].entropy < 0)
      throw Error("MT-Uncertainty: candidate " + std::to_string(i) + " has entropy " +
                  std::to_string(candidates[i].entropy) + " (an entropy is finite and >= 0)");
    if (candidates[i].classes == 0)
      throw Error("MT-Uncertainty: candidate " + std::to_string(i) + " has 0 classes (regression has 1)");
  }
}

// The mean of values[i] over the candidates of each task.
std::map<std::size_t, double> task_means(std::span<const Candidate> candidates,
                                         const std::vector<double>& values) {
  std::map<std::size_t, std::pair<double, std::size_t>> sums;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    auto& [sum, count] = sums[candidates[i].task];
    sum += values[i];
    ++count;
  }
  std::map<std::size_t, double> means;
  for (const auto& [task, sum_count] : sums)
    means[task] = sum_count.first / static_cast<double>(sum_count.second);
  return means;
}

double largest_value(const std::map<std::size_t, double>& means) {
  double largest = 0;
  for (const auto& [task, mean] : means) largest = std::max(largest, mean);
  return largest;
}

}  // namespace

TaskSampler task_sampler_from_name(std::string_view name) {
  std::string known;
  for (const auto& [sampler, sampler_name] : kSamplerNames) {
    if (sampler_name == name) return sampler;
    known += (known.empty() ? "" : ", ") + std::string(sampler_name);
  }
  throw Error("unknown task sampler '" + std::string(name) + "' (known: " + known + ")");
}

std::string_view task_sampler_name(TaskSampler sampler) {
  for (const auto& [known, name] : kSamplerNames)
    if (known == sampler) return name;
  throw Error("task sampler " + std::to_string(static_cast<int>(sampler)) + " has no name");
}

std::vector<double> task_probabilities(TaskSampler sampler, std::span<const std::size_t> task_sizes,
                                       double temperature_alpha) {
  if (sampler == TaskSampler::MtUncertainty || sampler == TaskSampler::MtUncertaintyWeighted)
    throw Error("task_probabilities: '" + std::string(task_sampler_name(sampler)) +
                "' draws b examples from every task and keeps the most uncertain "
                "(select_uncertain); it does not draw tasks by probability");
  if (task_sizes.empty()) throw Error("task_probabilities: no tasks");
  if (std::accumulate(task_sizes.begin(), task_sizes.end(), std::size_t{0}) == 0)
    throw Error("task_probabilities: every task is empty");
  if (sampler == TaskSampler::Temperature &&
      (!std::isfinite(temperature_alpha) || temperature_alpha < 0))
    throw Error("task_probabilities: temperature alpha " + std::to_string(temperature_alpha) +
                " must be finite and >= 0");
  std::vector<double> weights;
  for (std::size_t size : task_sizes) {
    const auto examples = static_cast<double>(size);
    weights.push_back(sampler == TaskSampler::Uniform            ? 1.0
                      : sampler == TaskSampler::SizeProportional ? examples
                                                                 : std::pow(examples, temperature_alpha));
  }
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& weight : weights) weight /= total;
  return weights;
}

TaskPools::TaskPools(std::span<const std::size_t> task_sizes, std::uint64_t seed)
    : seed_(seed), pools_(task_sizes.size()) {
  for (std::size_t task = 0; task < task_sizes.size(); ++task) {
    if (task_sizes[task] == 0) throw Error("task pools: task " + std::to_string(task) + " has no examples");
    pools_[task].order.resize(task_sizes[task]);
    shuffle(task);
  }
}

void TaskPools::shuffle(std::size_t task) {
  Pool& pool = pools_[task];
  std::iota(pool.order.begin(), pool.order.end(), std::size_t{0});
  SplitMix64 rng{seed_, task, pool.reloads};
  for (std::size_t i = pool.order.size(); i > 1; --i) std::swap(pool.order[i - 1], pool.order[rng.below(i)]);
}

std::vector<std::size_t> TaskPools::draw(std::size_t task, std::size_t count) {
  if (task >= pools_.size())
    throw Error("task pools: task " + std::to_string(task) + " out of range (" +
                std::to_string(pools_.size()) + " tasks)");
  Pool& pool = pools_[task];
  std::vector<std::size_t> drawn;
  drawn.reserve(count);
  while (drawn.size() < count) {
    if (pool.position == pool.order.size()) {
      ++pool.reloads;
      pool.position = 0;
      shuffle(task);
    }
    const std::size_t take = std::min(count - drawn.size(), pool.order.size() - pool.position);
    const auto from = pool.order.begin() + static_cast<std::ptrdiff_t>(pool.position);
    drawn.insert(drawn.end(), from, from + static_cast<std::ptrdiff_t>(take));
    pool.position += take;
  }
  return drawn;
}

std::size_t TaskPools::reloads(std::size_t task) const {
  if (task >= pools_.size())
    throw Error("task pools: task " + std::to_string(task) + " out of range (" +
                std::to_string(pools_.size()) + " tasks)");
  return pools_[task].reloads;
}

nlohmann::json TaskPools::state() const {
  nlohmann::json tasks = nlohmann::json::array();
  for (const Pool& pool : pools_)
    tasks.push_back({{"size", pool.order.size()}, {"reloads", pool.reloads}, {"position", pool.position}});
  return {{"tasks", std::move(tasks)}};
}

void TaskPools::restore(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("tasks") || !state["tasks"].is_array())
    throw Error(std::string(kStateContext) + "'tasks' is missing or not an array");
  const nlohmann::json& tasks = state["tasks"];
  if (tasks.size() != pools_.size())
    throw Error(std::string(kStateContext) + "'tasks' holds " + std::to_string(tasks.size()) +
                " tasks, these pools " + std::to_string(pools_.size()));
  std::vector<std::pair<std::size_t, std::size_t>> counters;  // (reloads, position) per task
  for (std::size_t task = 0; task < tasks.size(); ++task) {
    if (!tasks[task].is_object())
      throw Error(std::string(kStateContext) + "'tasks[" + std::to_string(task) + "]' is not an object");
    const std::size_t size = state_count(tasks[task], task, "size");
    const std::size_t position = state_count(tasks[task], task, "position");
    const std::string field = "'tasks[" + std::to_string(task) + "].";
    if (size != pools_[task].order.size())
      throw Error(std::string(kStateContext) + field + "size' is " + std::to_string(size) +
                  ", the task has " + std::to_string(pools_[task].order.size()) + " examples");
    if (position > size)
      throw Error(std::string(kStateContext) + field + "position' is " + std::to_string(position) +
                  ", past the task's " + std::to_string(size) + " examples");
    counters.emplace_back(state_count(tasks[task], task, "reloads"), position);
  }
  for (std::size_t task = 0; task < pools_.size(); ++task) {
    std::tie(pools_[task].reloads, pools_[task].position) = counters[task];
    shuffle(task);
  }
}

std::vector<double> uncertainty_scores(std::span<const Candidate> candidates, bool task_weighted) {
  check_candidates(candidates);
  std::vector<double> scores(candidates.size());
  if (!task_weighted) {
    std::vector<double> entropies;
    for (const Candidate& candidate : candidates) entropies.push_back(candidate.entropy);
    const double max_task_entropy = largest_value(task_means(candidates, entropies));  // Ĥ
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const double denominator = max_task_entropy * std::log(static_cast<double>(candidates[i].classes));
      scores[i] = denominator == 0 ? 0.0 : candidates[i].entropy / denominator;
    }
    return scores;
  }
  std::vector<double> normalised;
  for (const Candidate& candidate : candidates)
    normalised.push_back(candidate.entropy /
                         (std::log(static_cast<double>(candidate.classes)) + kLogClassesEpsilon));
  const std::map<std::size_t, double> task_mean = task_means(candidates, normalised);
  const double largest_mean = largest_value(task_mean);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    scores[i] = largest_mean == 0 ? 0.0 : normalised[i] * task_mean.at(candidates[i].task) / largest_mean;
  return scores;
}

std::vector<std::size_t> select_uncertain(std::span<const Candidate> candidates, std::size_t b,
                                          bool task_weighted) {
  if (b > candidates.size())
    throw Error("MT-Uncertainty: cannot select " + std::to_string(b) + " of " +
                std::to_string(candidates.size()) + " candidates");
  const std::vector<double> scores = uncertainty_scores(candidates, task_weighted);
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto chosen_end = order.begin() + static_cast<std::ptrdiff_t>(b);
  std::partial_sort(order.begin(), chosen_end, order.end(), [&](std::size_t x, std::size_t y) {
    return scores[x] > scores[y] || (scores[x] == scores[y] && x < y);
  });
  order.erase(chosen_end, order.end());
  return order;
}

}  // namespace strata
