#pragma once
// Summarisation as a TrainTask: teacher-forced cross-entropy on the summary tokens, and
// ROUGE of greedy summaries of validation documents at each evaluation. Denoising
// pretraining is the same task with sources noised afresh every epoch (an ExampleRedraw).
#include <functional>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/models/seq2seq.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata {
class Tokenizer;
}

namespace strata::train {

// A training example of an epoch made from a loaded one (its index in the training set): a
// pure function, so a resumed run redraws what the uninterrupted one saw.
using ExampleRedraw = std::function<Seq2SeqExample(const Seq2SeqExample& loaded, std::size_t index, std::int64_t epoch)>;

class Seq2SeqTask : public TrainTask, public AnalysisBatchSource {
 public:
  // Without `redraw` the training examples are used as loaded.
  Seq2SeqTask(models::Seq2Seq model, const Tokenizer& tokenizer, std::vector<Seq2SeqExample> train,
              std::vector<Seq2SeqExample> valid, std::int64_t max_length, ExampleRedraw redraw = {});
  torch::nn::Module& model() override { return *model_; }
  void start_epoch(std::int64_t epoch) override;
  const std::vector<std::size_t>& costs(Split split) const override;
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;
  // Encoder inputs of the rows, for the attention analyses (`strata analyze patterns`).
  AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) override;

 private:
  models::Seq2Seq model_;
  const Tokenizer& tokenizer_;
  std::vector<Seq2SeqExample> loaded_;  // the training examples redraw starts from; empty without it
  std::vector<Seq2SeqExample> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  std::int64_t max_length_;
  ExampleRedraw redraw_;
  std::int64_t epoch_ = -1;  // whose redrawn examples train_ holds
};

}  // namespace strata::train
