#pragma once
// Masked-LM pretraining of an encoder as a TrainTask (BERT, Devlin et al. 2019; the encoder a
// CA-MTL model starts from): the token head, one class per vocabulary token, predicts the
// original of every chosen token of a masked chunk (masked_lm.h), trained with cross-entropy on
// the chosen positions only. Training masks are drawn afresh every epoch from (seed, epoch,
// chunk); validation masks from a fixed seed of their own, the same at every evaluation, so
// valid_loss compares across steps and across runs. Each evaluation also reports mlm_accuracy.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/data/masked_lm.h"
#include "strata/doc/layout.h"
#include "strata/models/encoder_model.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata::train {

struct MlmMasking {
  MaskingVocabulary vocabulary;
  double probability = 0.15;  // pretrain.mlm_probability
  std::uint64_t seed = 1;     // train.seed: the training masks' seed
};

class MlmTask : public TrainTask, public AnalysisBatchSource {
 public:
  // The chunks as load_mlm_chunks gives them (mlm_examples.h), unmasked. strata::Error unless
  // the model has the token head with one label per vocabulary token and room
  // (model.max_positions) for the longest chunk, or when the masking probability is out of range.
  MlmTask(models::EncoderModel model, std::vector<Layout> train, std::vector<Layout> valid, MlmMasking masking);
  torch::nn::Module& model() override { return *model_; }
  void start_epoch(std::int64_t epoch) override { epoch_ = epoch; }
  const std::vector<std::size_t>& costs(Split split) const override;
  // Summed cross-entropy over the chosen tokens of the rows' chunks; labels = chosen tokens.
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  // "mlm_accuracy": the share of the chosen tokens of the first `documents` validation chunks
  // whose original is the head's argmax; 0 chunks give no metrics.
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;
  // The rows' chunks unmasked, for the attention analyses (`strata analyze patterns`).
  AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) override;

 private:
  models::EncoderModel model_;
  std::vector<Layout> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  MlmMasking masking_;
  std::int64_t epoch_ = 0;  // whose masks the training batches draw
};

}  // namespace strata::train
