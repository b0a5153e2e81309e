#pragma once
// Thesis ch. 2's hierarchical extractors (Sent-CLF, Sent-PTR) as a TrainTask: the loss against
// the chapter's oracle (models/sentence_extractors.h), and at each evaluation the ROUGE of the
// extracts of validation documents.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strata/data/sentence_extraction_examples.h"
#include "strata/models/sentence_extractors.h"
#include "strata/train/task.h"

namespace strata {
class Config;
class Progress;
}  // namespace strata

namespace strata::train {

// The extract.* keys of a run: the sentence caps, and how the extractor chooses.
SentenceExtractionOptions sentence_extraction_options(const Config& run);
models::ExtractionOptions extraction_options(const Config& run);

// Each example's chosen sentences (models::SentenceExtractor::extract) in batches of
// `batch_rows`, in the model's current mode; one step of *progress per example when given.
std::vector<std::vector<std::size_t>> extract_sentences(models::SentenceExtractor& extractor,
                                                        std::span<const SentenceExtractionExample> examples,
                                                        std::int64_t pad_id, const models::ExtractionOptions& options,
                                                        std::size_t batch_rows = 16, Progress* progress = nullptr);

class SentenceExtractionTask : public TrainTask {
 public:
  // `module` is the extractor as a torch module (what the trainer optimises).
  SentenceExtractionTask(std::shared_ptr<torch::nn::Module> module, std::int64_t pad_id,
                         std::vector<SentenceExtractionExample> train, std::vector<SentenceExtractionExample> valid,
                         models::ExtractionOptions options);
  torch::nn::Module& model() override { return *module_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  // Summed over the sentences (CLF) or pointer steps (PTR) of the rows; label smoothing unused.
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;
  // rouge1, rouge2, rougeL F (stemmed, 0..1) of the extracts, one sentence per line.
  std::map<std::string, double> extra_metrics(std::int64_t documents) override;

 private:
  std::shared_ptr<torch::nn::Module> module_;
  models::SentenceExtractor* extractor_;
  std::int64_t pad_id_;
  std::vector<SentenceExtractionExample> train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
  models::ExtractionOptions options_;
};

}  // namespace strata::train
