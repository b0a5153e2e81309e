#pragma once
// Extractive summarisation as a TrainTask (BERTSum, seed 003 §4.1): an encoder with a
// marker head reads the [SEP] closing each sentence and labels the sentence in or out of
// the summary; cross-entropy against the greedy oracle's labels, and at each evaluation the
// ROUGE of the top-k sentences of validation documents.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "strata/data/extractive_examples.h"
#include "strata/models/encoder_model.h"
#include "strata/train/analysis_batch.h"
#include "strata/train/task.h"

namespace strata {
class Config;
class Progress;
class Tokenizer;
}  // namespace strata

namespace strata::train {

struct ExtractiveSelection {
  std::size_t top_k = 1;
  bool trigram_blocking = false;
};

// A run's settings: the examples' cut (data.max_source_tokens, extract.oracle_sentences) and
// the sentences picked at test time (extract.top_k, extract.trigram_blocking).
ExtractiveOptions extractive_options(const Config& run);
ExtractiveSelection extractive_selection(const Config& run);

// Per example, the model's probability that each of its sentences belongs in the summary,
// computed without grad in batches of `batch_rows`, in the model's current mode. Adds one
// to *progress per example when given.
std::vector<std::vector<float>> sentence_scores(models::EncoderModel& model,
                                                std::span<const ExtractiveExample> examples,
                                                std::size_t batch_rows = 8, Progress* progress = nullptr);

// The summary of each example: its selected sentences (select_sentences), one per line.
std::vector<std::string> extractive_summaries(std::span<const ExtractiveExample> examples,
                                              const std::vector<std::vector<float>>& scores,
                                              const ExtractiveSelection& selection);

class ExtractiveTask : public TrainTask, public AnalysisBatchSource {
 public:
  // strata::Error unless the model has a marker head with 2 labels reading the tokenizer's
  // sep token.
  ExtractiveTask(models::EncoderModel model, const Tokenizer& tokenizer, std::vector<ExtractiveExample> train,
                 std::vector<ExtractiveExample> valid, ExtractiveSelection selection);
  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  // Summed over the sentences of the rows; labels = their number.
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  // rouge1, rouge2, rougeL F (stemmed, 0..1, as the seq2seq task) of the selected sentences.
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;
  // Encoder inputs of the rows, for the attention analyses (`strata analyze patterns`).
  AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) override;

 private:
  models::EncoderModel model_;
  std::vector<ExtractiveExample> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  ExtractiveSelection selection_;
};

}  // namespace strata::train
