#include "strata/train/multitask_task.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <cmath>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"
#include "strata/eval/classification_metrics.h"

namespace strata::train {

namespace {

std::vector<std::size_t> task_sizes_of(const std::vector<MultitaskExample>& examples, std::size_t tasks) {
  std::vector<std::size_t> sizes(tasks, 0);
  for (const MultitaskExample& e : examples) ++sizes[e.task];
  return sizes;
}

// The ids of `rows` padded to `length` (the model's max_positions), their padding and tasks.
struct MultitaskBatch {
  at::Tensor ids, padding, task;
};

MultitaskBatch collate(std::span<const MultitaskExample> examples, std::span<const std::size_t> rows,
                       std::int64_t length, std::int64_t pad_id) {
  const auto n = static_cast<std::int64_t>(rows.size());
  at::Tensor ids = torch::full({n, length}, pad_id, torch::kInt64);
  at::Tensor padding = torch::zeros({n, length}, torch::kBool);
  at::Tensor task = torch::empty({n}, torch::kInt64);
  auto id = ids.accessor<std::int64_t, 2>();
  auto real = padding.accessor<bool, 2>();
  for (std::int64_t r = 0; r < n; ++r) {
    const MultitaskExample& e = examples[rows[static_cast<std::size_t>(r)]];
    for (std::size_t i = 0; i < e.ids.size(); ++i) {
      id[r][static_cast<std::int64_t>(i)] = e.ids[i];
      real[r][static_cast<std::int64_t>(i)] = true;
    }
    task[r] = static_cast<std::int64_t>(e.task);
  }
  return {ids, padding, task};
}

// Task `task`'s loss on each of its rows, [n]: cross-entropy, or squared error for a regression.
at::Tensor row_losses(const SuiteTask& task, const at::Tensor& outputs, const std::vector<MultitaskExample>& examples,
                      std::span<const std::size_t> rows, const std::vector<std::int64_t>& positions,
                      double label_smoothing) {
  std::vector<std::int64_t> labels;
  std::vector<double> values;
  for (const std::int64_t p : positions) {
    const MultitaskExample& e = examples[rows[static_cast<std::size_t>(p)]];
    labels.push_back(e.label);
    values.push_back(e.value);
  }
  if (task.regression)
    return (outputs - torch::tensor(values, torch::kFloat64).to(outputs.scalar_type())).pow(2);
  return torch::nn::functional::cross_entropy(
      outputs, torch::tensor(labels, torch::kInt64),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone).label_smoothing(label_smoothing));
}

// Each row's task output: task -> (positions in `rows`, outputs [n, C] logits or [n] values).
struct TaskOutputs {
  std::vector<std::int64_t> positions;
  at::Tensor outputs;
};

std::map<std::size_t, TaskOutputs> run_heads(models::CaMtlModel& model, std::span<const MultitaskExample> examples,
                                             std::span<const std::size_t> rows) {
  const MultitaskBatch batch = collate(examples, rows, model->config().max_positions, model->config().pad_id);
  const at::Tensor pooled = model->pooled(batch.ids, batch.padding, batch.task);
  std::map<std::size_t, TaskOutputs> out;
  for (std::size_t r = 0; r < rows.size(); ++r)
    out[examples[rows[r]].task].positions.push_back(static_cast<std::int64_t>(r));
  for (auto& [task, group] : out)
    group.outputs = model->head(static_cast<std::int64_t>(task),
                                pooled.index_select(0, torch::tensor(group.positions, torch::kInt64)));
  return out;
}

}  // namespace

std::vector<TaskPredictions> predict_tasks(models::CaMtlModel& model, const std::vector<SuiteTask>& tasks,
                                           std::span<const MultitaskExample> examples, std::size_t per_task,
                                           std::size_t batch) {
  std::vector<std::size_t> rows, taken(tasks.size(), 0);
  for (std::size_t r = 0; r < examples.size(); ++r)
    if (taken[examples[r].task]++ < per_task) rows.push_back(r);
  std::vector<TaskPredictions> out(tasks.size());
  for (std::size_t begin = 0; begin < rows.size(); begin += batch) {
    const auto chunk = std::span<const std::size_t>(rows).subspan(begin, std::min(batch, rows.size() - begin));
    for (const auto& [task, group] : run_heads(model, examples, chunk)) {
      TaskPredictions& p = out[task];
      if (tasks[task].regression) {
        const at::Tensor v = group.outputs.to(torch::kFloat64).contiguous();
        p.values.insert(p.values.end(), v.data_ptr<double>(), v.data_ptr<double>() + v.numel());
      } else {
        const at::Tensor c = group.outputs.argmax(-1).contiguous();
        p.predicted.insert(p.predicted.end(), c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel());
      }
      for (const std::int64_t position : group.positions) {
        const MultitaskExample& e = examples[chunk[static_cast<std::size_t>(position)]];
        if (tasks[task].regression) {
          p.targets.push_back(e.value);
        } else {
          p.gold.push_back(e.label);
        }
      }
    }
  }
  return out;
}

double task_score(const SuiteTask& task, const TaskPredictions& p) {
  if (task.metric == "pearson") return pearson(p.values, p.targets);
  if (task.metric == "spearman") return spearman(p.values, p.targets);
  if (task.metric == "macro_f1") return macro_f1(p.predicted, p.gold, task.classes());
  if (task.metric == "f1") return binary_f1(p.predicted, p.gold, 0);
  if (task.metric == "mcc") return matthews_corrcoef(p.predicted, p.gold, task.classes());
  return accuracy(p.predicted, p.gold);
}

MultitaskTask::MultitaskTask(models::CaMtlModel model, std::vector<SuiteTask> tasks, std::vector<MultitaskExample> train,
                             std::vector<MultitaskExample> valid, MultitaskOptions options)
    : model_(std::move(model)),
      tasks_(std::move(tasks)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      options_(options),
      task_sizes_(task_sizes_of(train_, tasks_.size())),
      pools_(task_sizes_, options.seed) {
  std::vector<models::TaskHead> expected;
  for (const SuiteTask& t : tasks_) expected.push_back({t.name, t.classes()});
  if (model_->tasks() != expected)
    throw Error("model.tasks: the model has " + models::format_task_heads(model_->tasks()) + ", the suite's tasks are " +
                models::format_task_heads(expected));
  if (options_.batch_size == 0) throw Error("multi-task training: the batch size must be positive");
  const std::int64_t length = model_->config().max_positions;
  for (auto* split : {&train_, &valid_}) {
    std::stable_sort(split->begin(), split->end(),
                     [](const MultitaskExample& a, const MultitaskExample& b) { return a.task < b.task; });
    for (const MultitaskExample& e : *split)
      if (static_cast<std::int64_t>(e.ids.size()) > length)
        throw Error("model.max_positions: an example of task " + tasks_[e.task].name + " has " +
                    std::to_string(e.ids.size()) + " tokens, more than the model's " + std::to_string(length));
  }
  for (std::size_t t = 0; t < tasks_.size(); ++t)
    if (task_sizes_[t] == 0) throw Error("multi-task training: task " + tasks_[t].name + " has no training examples");
  train_costs_.assign(train_.size(), static_cast<std::size_t>(length));
  valid_costs_.assign(valid_.size(), static_cast<std::size_t>(length));
  std::size_t offset = 0;
  for (const std::size_t size : task_sizes_) {
    task_offsets_.push_back(offset);
    offset += size;
  }
  target_ranges_.assign(tasks_.size(), {INFINITY, -INFINITY});
  for (const MultitaskExample& e : train_) {
    auto& [low, high] = target_ranges_[e.task];
    low = std::min(low, e.value);
    high = std::max(high, e.value);
  }
  if (options_.sampler != TaskSampler::MtUncertainty && options_.sampler != TaskSampler::MtUncertaintyWeighted)
    probabilities_ = task_probabilities(options_.sampler, task_sizes_, options_.temperature_alpha);
  trained_.assign(tasks_.size(), 0);
  seen_.assign(train_.size(), false);
}

const std::vector<std::size_t>& MultitaskTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss MultitaskTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  const std::vector<MultitaskExample>& examples = split == Split::Train ? train_ : valid_;
  BatchLoss result;
  std::vector<at::Tensor> parts;
  for (const auto& [task, group] : run_heads(model_, examples, rows)) {
    const at::Tensor losses = row_losses(tasks_[task], group.outputs, examples, rows, group.positions, label_smoothing);
    parts.push_back(split == Split::Train ? losses.mean() : losses.sum());
  }
  result.loss_sum = torch::stack(parts).sum();
  if (split == Split::Train) result.loss_sum = result.loss_sum / static_cast<double>(parts.size());
  result.labels = split == Split::Train ? 1 : static_cast<std::int64_t>(rows.size());
  for (const std::size_t r : rows) result.tokens += static_cast<std::int64_t>(examples[r].ids.size());
  return result;
}

BatchLoss MultitaskTask::shard_loss(std::span<const std::size_t> batch, std::span<const std::size_t> shard,
                                     double label_smoothing) {
  std::map<std::size_t, double> in_batch;  // examples per task in the whole batch
  for (const std::size_t r : batch) ++in_batch[train_[r].task];
  BatchLoss result;
  std::vector<at::Tensor> parts;
  for (const auto& [task, group] : run_heads(model_, train_, shard)) {
    const at::Tensor losses = row_losses(tasks_[task], group.outputs, train_, shard, group.positions, label_smoothing);
    parts.push_back(losses.sum() / (static_cast<double>(in_batch.size()) * in_batch.at(task)));
  }
  result.loss_sum = torch::stack(parts).sum();
  result.labels = 1;
  result.whole_batch_mean = true;
  for (const std::size_t r : shard) result.tokens += static_cast<std::int64_t>(train_[r].ids.size());
  return result;
}

double MultitaskTask::candidate_entropy(std::size_t task, const at::Tensor& output) const {
  if (!tasks_[task].regression) {
    const at::Tensor log_p = torch::log_softmax(output.to(torch::kFloat64), -1);
    return -(log_p.exp() * log_p).sum().item<double>();
  }
  const auto [low, high] = target_ranges_[task];
  const double span = high > low ? high - low : 1.0;
  const double p = std::clamp((output.item<double>() - low) / span, 1e-12, 1.0 - 1e-12);
  return -(p * std::log(p) + (1 - p) * std::log(1 - p));
}

std::vector<std::size_t> MultitaskTask::draw_one_task() {
  SplitMix64 random({options_.seed, 0x7a5c, draws_});
  double u = random.uniform();
  std::size_t task = 0;
  while (task + 1 < probabilities_.size() && u >= probabilities_[task]) u -= probabilities_[task++];
  std::vector<std::size_t> rows = pools_.draw(task, options_.batch_size);
  for (std::size_t& r : rows) r += task_offsets_[task];
  return rows;
}

std::vector<std::size_t> MultitaskTask::draw_uncertain() {
  std::vector<std::size_t> rows;
  for (std::size_t t = 0; t < tasks_.size(); ++t)
    for (const std::size_t i : pools_.draw(t, options_.batch_size)) rows.push_back(task_offsets_[t] + i);
  std::vector<Candidate> candidates(rows.size());
  {
    torch::NoGradGuard no_grad;  // in train mode, dropout on, as the public code's candidate pass
    for (const auto& [task, group] : run_heads(model_, train_, rows))
      for (std::size_t k = 0; k < group.positions.size(); ++k)
        candidates[static_cast<std::size_t>(group.positions[k])] = {
            task, candidate_entropy(task, group.outputs[static_cast<std::int64_t>(k)]),
            tasks_[task].regression ? 2 : static_cast<std::size_t>(tasks_[task].classes())};
  }
  std::vector<std::size_t> chosen;
  for (const std::size_t c :
       select_uncertain(candidates, options_.batch_size, options_.sampler == TaskSampler::MtUncertaintyWeighted))
    chosen.push_back(rows[c]);
  return chosen;
}

std::vector<std::size_t> MultitaskTask::next_batch() {
  std::vector<std::size_t> rows = probabilities_.empty() ? draw_uncertain() : draw_one_task();
  ++draws_;
  for (const std::size_t r : rows) {
    ++trained_[train_[r].task];
    seen_[r] = true;
  }
  return rows;
}

std::size_t MultitaskTask::batches_per_epoch() const {
  const std::size_t largest = *std::max_element(task_sizes_.begin(), task_sizes_.end());
  return tasks_.size() * ((largest + options_.batch_size - 1) / options_.batch_size);
}

nlohmann::json MultitaskTask::sampler_state() const {
  std::string seen(seen_.size(), '0');
  for (std::size_t r = 0; r < seen_.size(); ++r)
    if (seen_[r]) seen[r] = '1';
  return {{"pools", pools_.state()}, {"draws", draws_}, {"trained", trained_}, {"seen", seen}};
}

void MultitaskTask::restore_sampler_state(const nlohmann::json& state) {
  try {
    pools_.restore(state.at("pools"));
    draws_ = state.at("draws").get<std::uint64_t>();
    const auto trained = state.at("trained").get<std::vector<std::uint64_t>>();
    const auto seen = state.at("seen").get<std::string>();
    if (trained.size() != tasks_.size() || seen.size() != train_.size())
      throw Error("the sampler state is of another suite (" + std::to_string(trained.size()) + " tasks, " +
                  std::to_string(seen.size()) + " training examples)");
    trained_ = trained;
    for (std::size_t r = 0; r < seen.size(); ++r) seen_[r] = seen[r] == '1';
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("the checkpoint's sampler state is malformed: ") + e.what());
  }
}

std::map<std::string, double> MultitaskTask::extra_metrics(std::int64_t documents) {
  std::map<std::string, double> metrics;
  if (documents <= 0) return metrics;
  const std::vector<TaskPredictions> predictions =
      predict_tasks(model_, tasks_, valid_, static_cast<std::size_t>(documents));
  double total = 0;
  std::size_t scored = 0;
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (predictions[t].gold.empty() && predictions[t].targets.empty()) continue;
    const double value = task_score(tasks_[t], predictions[t]);
    metrics["task/" + tasks_[t].name] = value;
    total += value;
    ++scored;
  }
  if (scored > 0) metrics["score"] = total / static_cast<double>(scored);
  std::uint64_t trained = 0;
  for (const std::uint64_t n : trained_) trained += n;
  for (std::size_t t = 0; t < tasks_.size() && trained > 0; ++t)
    metrics["share/" + tasks_[t].name] = static_cast<double>(trained_[t]) / static_cast<double>(trained);
  metrics["data_used"] = static_cast<double>(std::count(seen_.begin(), seen_.end(), true)) /
                         static_cast<double>(std::max<std::size_t>(seen_.size(), 1));
  return metrics;
}

}  // namespace strata::train
