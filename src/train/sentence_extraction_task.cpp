#include "strata/train/sentence_extraction_task.h"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/data/extractive_examples.h"

namespace strata::train {

namespace {

std::vector<std::size_t> sentence_costs(std::span<const SentenceExtractionExample> examples) {
  std::vector<std::size_t> costs;
  costs.reserve(examples.size());
  // A batch pads every sentence to the longest: count sentences x their longest.
  for (const auto& e : examples) {
    std::size_t longest = 0;
    for (const auto& sentence : e.sentence_ids) longest = std::max(longest, sentence.size());
    costs.push_back(e.sentence_ids.size() * longest);
  }
  return costs;
}

std::vector<std::vector<std::size_t>> oracles_of(std::span<const SentenceExtractionExample> examples,
                                                 std::span<const std::size_t> rows) {
  std::vector<std::vector<std::size_t>> oracles;
  for (std::size_t r : rows) oracles.push_back(examples[r].oracle);
  return oracles;
}

// A config value that must be a positive count.
std::size_t positive_size(const Config& run, const std::string& key) {
  const auto value = run.get<std::int64_t>(key);
  if (value <= 0) throw Error(key + ": must be positive, got " + std::to_string(value));
  return static_cast<std::size_t>(value);
}

}  // namespace

SentenceExtractionOptions sentence_extraction_options(const Config& run) {
  SentenceExtractionOptions options;
  options.max_sentences = positive_size(run, "extract.max_sentences");
  options.max_sentence_tokens = positive_size(run, "extract.max_sentence_tokens");
  return options;
}

models::ExtractionOptions extraction_options(const Config& run) {
  models::ExtractionOptions options;
  options.top_k = positive_size(run, "extract.top_k");
  options.beam_size = positive_size(run, "extract.beam_size");
  options.max_steps = positive_size(run, "extract.max_steps");
  return options;
}

std::vector<std::vector<std::size_t>> extract_sentences(models::SentenceExtractor& extractor,
                                                        std::span<const SentenceExtractionExample> examples,
                                                        std::int64_t pad_id, const models::ExtractionOptions& options,
                                                        std::size_t batch_rows, Progress* progress) {
  std::vector<std::vector<std::size_t>> chosen;
  chosen.reserve(examples.size());
  const std::size_t step = std::max<std::size_t>(batch_rows, 1);
  for (std::size_t begin = 0; begin < examples.size(); begin += step) {
    std::vector<std::size_t> rows(std::min(examples.size(), begin + step) - begin);
    std::iota(rows.begin(), rows.end(), begin);
    for (auto& picks : extractor.extract(models::collate_sentences(examples, rows, pad_id), options)) {
      chosen.push_back(std::move(picks));
      if (progress) progress->add();
    }
  }
  return chosen;
}

SentenceExtractionTask::SentenceExtractionTask(std::shared_ptr<torch::nn::Module> module, std::int64_t pad_id,
                                               std::vector<SentenceExtractionExample> train,
                                               std::vector<SentenceExtractionExample> valid,
                                               models::ExtractionOptions options)
    : module_(std::move(module)),
      extractor_(dynamic_cast<models::SentenceExtractor*>(module_.get())),
      pad_id_(pad_id),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(sentence_costs(train_)),
      valid_costs_(sentence_costs(valid_)),
      options_(options) {
  if (!extractor_) throw Error("sentence extraction task: the model is not a sentence extractor (sent_clf, sent_ptr)");
}

const std::vector<std::size_t>& SentenceExtractionTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss SentenceExtractionTask::loss(Split split, std::span<const std::size_t> rows, double) {
  const auto& examples = split == Split::Train ? train_ : valid_;
  const models::SentenceBatch batch = models::collate_sentences(examples, rows, pad_id_);
  const std::vector<std::vector<std::size_t>> oracles = oracles_of(examples, rows);
  const models::ExtractorLoss loss = extractor_->loss(batch, oracles);
  return {loss.sum, loss.targets, batch.tokens_read};
}

std::map<std::string, double> SentenceExtractionTask::extra_metrics(std::int64_t documents) {
  const std::size_t n = std::min(valid_.size(), static_cast<std::size_t>(std::max<std::int64_t>(documents, 0)));
  if (n == 0) return {};
  const std::span<const SentenceExtractionExample> subset(valid_.data(), n);
  const auto chosen = extract_sentences(*extractor_, subset, pad_id_, options_);
  std::vector<std::string> references, extracts;
  for (std::size_t i = 0; i < n; ++i) {
    references.push_back(subset[i].reference);
    extracts.push_back(join_sentences(subset[i].sentences, chosen[i]));
  }
  return mean_rouge_f(references, extracts);
}

}  // namespace strata::train
