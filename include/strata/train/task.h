#pragma once
// What the trainer needs from a kind of training (summarisation, language modelling, ...):
// the model, the cost of each example (for token-budget batches), the loss of a batch, and
// any metrics beyond the validation loss.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torch::nn {
class Module;
}

namespace strata::train {

enum class Split { Train, Valid };

struct BatchLoss {
  at::Tensor loss_sum;         // summed over the labelled tokens
  std::int64_t labels = 0;     // labelled tokens (the loss is averaged over these)
  std::int64_t tokens = 0;     // all real tokens read (inputs + targets), for tokens/s
  // loss_sum is already this shard's share of the whole batch's mean loss (labels unused):
  // see TrainTask::shard_loss.
  bool whole_batch_mean = false;
};

class TrainTask {
 public:
  virtual ~TrainTask() = default;
  virtual torch::nn::Module& model() = 0;
  // Per example of the split, its padded cost in tokens; empty when the split is absent.
  virtual const std::vector<std::size_t>& costs(Split split) const = 0;
  // Called before the training batches of `epoch` are planned, when a run starts or resumes
  // and at every new epoch: a task whose examples change per epoch (fresh denoising noise)
  // redraws them here, costs included.
  virtual void start_epoch(std::int64_t epoch) {}
  virtual BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) = 0;
  // A data-parallel rank's part of the training loss of `batch`: loss(shard) by default, whose
  // sums and labels add up over the ranks to the batch's. A task whose loss is no sum over
  // examples (a mean of per-task means) weighs the shard's examples by the whole batch
  // instead and sets whole_batch_mean, so that the ranks' parts still add up to loss(batch).
  virtual BatchLoss shard_loss(std::span<const std::size_t> batch, std::span<const std::size_t> shard,
                               double label_smoothing) {
    return loss(Split::Train, shard, label_smoothing);
  }
  // Metrics computed at each evaluation besides the validation loss (ROUGE for summarisers),
  // on at most `documents` validation examples. The model is in eval mode, without grad.
  virtual std::map<std::string, double> extra_metrics(std::int64_t documents) { return {}; }

  // A task that draws its own training batches (a multi-task sampler: CA-MTL's MT-Uncertainty
  // reads the model's entropies on candidates before it chooses) says so here; the trainer
  // then plans none and asks next_batch() for each, batches_per_epoch() of them an epoch.
  // next_batch runs after the trainer has reseeded the generators for the step, in train mode.
  virtual bool draws_batches() const { return false; }
  virtual std::vector<std::size_t> next_batch() { return {}; }
  virtual std::size_t batches_per_epoch() const { return 0; }
  // What such a task needs to go on exactly after a resume, saved in every checkpoint.
  virtual nlohmann::json sampler_state() const { return nullptr; }
  virtual void restore_sampler_state(const nlohmann::json& state) {}
};

// Summed token cross-entropy of logits [.., V] against labels [..] (-100 = ignored).
at::Tensor token_loss_sum(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing);

// The summarisers' evaluation metrics: rouge1, rouge2 and rougeL F (stemmed, 0..1) of each
// prediction against its reference, averaged. strata::Error when the counts differ.
std::map<std::string, double> mean_rouge_f(std::span<const std::string> references,
                                           std::span<const std::string> predictions);

}  // namespace strata::train
