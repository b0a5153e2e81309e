#include "strata/train/segmentation_task.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/models/collate.h"
#include "strata/core/progress.h"
#include "strata/data/token_batches.h"
#include "strata/eval/boundary_scores.h"

namespace strata::train {

namespace {

struct SegmentationBatch : models::EncoderBatch {
  at::Tensor labels;  // [B] int64
};

SegmentationBatch collate(std::span<const SegmentationExample> examples,
                          std::span<const std::size_t> rows, std::int64_t pad_id, bool with_layout) {
  std::vector<const Layout*> layouts;
  std::vector<std::int64_t> labels;
  for (const std::size_t r : rows) {
    layouts.push_back(&examples[r].layout);
    labels.push_back(examples[r].label);
  }
  SegmentationBatch batch{models::collate_encoder(layouts, pad_id, with_layout), {}};
  batch.labels = torch::tensor(labels, torch::kInt64);
  return batch;
}

// The layout goes to the model when collate made one (a model whose attention reads it).
at::Tensor logits_of(models::EncoderModel& model, const SegmentationBatch& batch) {
  return model->forward(batch.ids, batch.padding, batch.layout.batch() > 0 ? &batch.layout : nullptr).logits;
}

void check_model(const models::ModelConfig& config, std::span<const SegmentationExample> train,
                 std::span<const SegmentationExample> valid) {
  if (config.head != models::EncoderHead::Sequence)
    throw Error("model.head: topic segmentation classifies each candidate boundary from its first token and "
                "needs the 'sequence' head; the model has '" + models::encoder_head_name(config.head) + "'");
  if (config.num_labels != 2)
    throw Error("model.num_labels: topic segmentation has 2 labels (boundary or not); the model has " +
                std::to_string(config.num_labels));
  std::size_t longest = 0;
  for (const auto split : {train, valid})
    for (const SegmentationExample& example : split) longest = std::max(longest, example.layout.size());
  if (static_cast<std::int64_t>(longest) > config.max_positions)
    throw Error("model.max_positions: segmentation examples have up to " + std::to_string(longest) +
                " tokens ([CLS], 2 × segment.context_tokens and 2 [SEP]), more than the model's " +
                std::to_string(config.max_positions) + " positions");
}

}  // namespace

SegmentationTask::SegmentationTask(models::EncoderModel model, std::vector<SegmentationExample> train,
                                   std::vector<SegmentationExample> valid)
    : model_(std::move(model)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(segmentation_costs(train_)),
      valid_costs_(segmentation_costs(valid_)) {
  check_model(model_->config(), train_, valid_);
}

const std::vector<std::size_t>& SegmentationTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss SegmentationTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  const SegmentationBatch batch =
      collate(split == Split::Train ? train_ : valid_, rows, model_->config().pad_id, model_->uses_layout());
  return {token_loss_sum(logits_of(model_, batch), batch.labels, label_smoothing),
          static_cast<std::int64_t>(rows.size()), batch.tokens};
}

AnalysisBatch SegmentationTask::analysis_batch(Split split, std::span<const std::size_t> rows) {
  std::vector<const Layout*> layouts;
  for (const std::size_t r : rows) layouts.push_back(&(split == Split::Train ? train_ : valid_)[r].layout);
  return encoder_analysis_batch(model_, layouts);
}

std::map<std::string, double> SegmentationTask::extra_metrics(std::int64_t documents) {
  const std::size_t n = std::min(valid_.size(), static_cast<std::size_t>(std::max<std::int64_t>(documents, 0)));
  if (n == 0) return {};
  const std::span<const SegmentationExample> subset(valid_.data(), n);
  const std::vector<float> probabilities = boundary_probabilities(model_, subset);
  std::vector<int> predicted, gold;
  for (std::size_t i = 0; i < n; ++i) {
    predicted.push_back(probabilities[i] > 0.5f);
    gold.push_back(subset[i].label);
  }
  const BoundaryScores scores = boundary_scores(predicted, gold);
  return {{"precision", scores.precision}, {"recall", scores.recall}, {"f1", scores.f1}};
}

std::vector<float> boundary_probabilities(models::EncoderModel& model, std::span<const SegmentationExample> examples,
                                          std::size_t max_tokens, Progress* progress) {
  const bool was_training = model->is_training();
  model->eval();
  torch::NoGradGuard no_grad;
  std::vector<float> out(examples.size());
  for (const std::vector<std::size_t>& rows : plan_batches_in_order(segmentation_costs(examples), max_tokens)) {
    const SegmentationBatch batch = collate(examples, rows, model->config().pad_id, model->uses_layout());
    const at::Tensor boundary = torch::softmax(logits_of(model, batch), -1).select(1, 1).to(torch::kFloat).contiguous();
    const float* p = boundary.data_ptr<float>();
    for (std::size_t i = 0; i < rows.size(); ++i) out[rows[i]] = p[i];
    if (progress) progress->add(rows.size());
  }
  model->train(was_training);
  return out;
}

}  // namespace strata::train
