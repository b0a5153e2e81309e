#pragma once
// Multi-task training of a CA-MTL model (thesis ch. 3) as a TrainTask that draws its own
// batches (task.h's draws_batches):
//   - uniform / size / temperature: each batch is b examples of one task, the task drawn by
//     π_rand, π_|task| or π ∝ |D|^α (Eq. 3.6, Eq. 1.7)
//   - mt-uncertainty (Algorithm 1) and mt-uncertainty-weighted (the public code's scores):
//     b candidates from every task, the model's entropy on each (no grad, train mode, as the
//     code does), the b most uncertain trained on and the rest consumed
// Examples are drawn without replacement from per-task pools that reload when empty
// (data/task_sampling.h). The loss of a batch is the mean over the tasks present of each
// task's mean loss (cross-entropy; squared error for a regression). An epoch is T ·
// max_t ⌈|D_t| / b⌉ batches, the public code's.
//
// A regression head predicts one value and has no entropy; the thesis's code copies another
// task's entropies onto it. Here its prediction, scaled to [0, 1] by the range of the
// training targets, is read as a two-class distribution, whose entropy (log 2 at most) it
// gets: most uncertain halfway, as a classifier is at p = 0.5.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "strata/data/multitask_examples.h"
#include "strata/data/task_sampling.h"
#include "strata/models/ca_mtl.h"
#include "strata/train/task.h"

namespace strata::train {

struct MultitaskOptions {
  TaskSampler sampler = TaskSampler::MtUncertainty;
  double temperature_alpha = 0.5;  // the temperature sampler's α
  std::size_t batch_size = 32;     // b
  std::uint64_t seed = 1;
};

// A model's outputs on a task's examples: predicted classes or values beside the gold ones.
struct TaskPredictions {
  std::vector<std::int64_t> predicted, gold;  // classification
  std::vector<double> values, targets;        // regression
};

// Predictions per task (indexed as `tasks`) on `examples`, at most `per_task` of each task
// (the first ones), in batches of `batch` rows. The caller sets eval mode and no grad.
std::vector<TaskPredictions> predict_tasks(models::CaMtlModel& model, const std::vector<SuiteTask>& tasks,
                                           std::span<const MultitaskExample> examples, std::size_t per_task,
                                           std::size_t batch = 64);
// The task's metric (SuiteTask::metric) of its predictions.
double task_score(const SuiteTask& task, const TaskPredictions& predictions);

class MultitaskTask : public TrainTask {
 public:
  // strata::Error unless the model's tasks (model.tasks) are `tasks`, in order, and the
  // examples fit its max_positions.
  MultitaskTask(models::CaMtlModel model, std::vector<SuiteTask> tasks, std::vector<MultitaskExample> train,
                std::vector<MultitaskExample> valid, MultitaskOptions options);

  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  // Train: the per-task mean of the rows' losses, averaged over the tasks present (labels =
  // 1). Valid: the rows' losses summed (labels = rows).
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  // Each shard example weighs 1 / (tasks in the batch · its task's examples in the batch).
  BatchLoss shard_loss(std::span<const std::size_t> batch, std::span<const std::size_t> shard,
                       double label_smoothing) override;
  // "task/NAME", each task's metric (SuiteTask::metric) on its first `documents` validation
  // examples; "score", their mean; "share/TASK", the share of the examples trained
  // on so far that came from the task; "data_used", the share of distinct training examples
  // trained on at least once.
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;

  bool draws_batches() const override { return true; }
  std::vector<std::size_t> next_batch() override;
  std::size_t batches_per_epoch() const override;
  nlohmann::json sampler_state() const override;
  void restore_sampler_state(const nlohmann::json& state) override;


 private:
  std::vector<std::size_t> draw_one_task();
  std::vector<std::size_t> draw_uncertain();
  double candidate_entropy(std::size_t task, const at::Tensor& output) const;

  models::CaMtlModel model_;
  std::vector<SuiteTask> tasks_;
  std::vector<MultitaskExample> train_, valid_;
  MultitaskOptions options_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  std::vector<std::size_t> task_offsets_, task_sizes_;  // train rows of task t: offsets[t] + [0, sizes[t])
  std::vector<std::pair<double, double>> target_ranges_;  // regression tasks' training target min, max
  std::vector<double> probabilities_;                     // task samplers
  TaskPools pools_;
  // Sampler state: batches drawn, examples trained on per task, and which rows ever were.
  std::uint64_t draws_ = 0;
  std::vector<std::uint64_t> trained_;
  std::vector<bool> seen_;
};

}  // namespace strata::train
