#pragma once
// Summarisation as a TrainTask: teacher-forced cross-entropy on the summary tokens, and
// ROUGE of greedy summaries of validation documents at each evaluation.
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/models/seq2seq.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata {
class Tokenizer;
}

namespace strata::train {

class Seq2SeqTask : public TrainTask, public AnalysisBatchSource {
 public:
  Seq2SeqTask(models::Seq2Seq model, const Tokenizer& tokenizer, std::vector<Seq2SeqExample> train,
              std::vector<Seq2SeqExample> valid, std::int64_t max_length);
  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;
  // Encoder inputs of the rows, for the attention analyses (`strata analyze patterns`).
  AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) override;

 private:
  models::Seq2Seq model_;
  const Tokenizer& tokenizer_;
  std::vector<Seq2SeqExample> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  std::int64_t max_length_;
};

}  // namespace strata::train
