#pragma once
// Topic segmentation as a TrainTask (Cross-Segment BERT; seed 003 §4.1): an encoder with the
// sequence head classifies each candidate boundary from its [CLS] vector, trained with
// cross-entropy; each evaluation reports the precision, recall and F1 of the boundary class.
#include <cstddef>
#include <span>
#include <vector>

#include "strata/data/segmentation_examples.h"
#include "strata/models/encoder_model.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata {
class Progress;
}

namespace strata::train {

class SegmentationTask : public TrainTask, public AnalysisBatchSource {
 public:
  // strata::Error unless the model has the sequence head with 2 labels and room
  // (model.max_positions) for the longest example.
  SegmentationTask(models::EncoderModel model, std::vector<SegmentationExample> train,
                   std::vector<SegmentationExample> valid);
  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  // Summed cross-entropy over the examples of `rows`; labels = examples.
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  // "precision", "recall" and "f1" of the boundary class (boundary_scores.h) on the first
  // `documents` validation examples, predicted by argmax. The count is of candidate
  // boundaries (examples), not of documents; 0 gives no metrics.
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;
  // Encoder inputs of the rows, for the attention analyses (`strata analyze patterns`).
  AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) override;

 private:
  models::EncoderModel model_;
  std::vector<SegmentationExample> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
};

// The model's probability that each example is a boundary (softmax of its logits, class 1),
// in example order, batched in order under max_tokens (rows × longest). Runs in eval mode
// without grad and restores the model's mode; `progress`, when given, advances per example.
std::vector<float> boundary_probabilities(models::EncoderModel& model,
                                          std::span<const SegmentationExample> examples,
                                          std::size_t max_tokens = 4096,
                                          Progress* progress = nullptr);

}  // namespace strata::train
