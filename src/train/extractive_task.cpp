#include "strata/train/extractive_task.h"

#include <torch/torch.h>

#include <algorithm>

#include <fmt/format.h>

#include "strata/attn/token_layout.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/models/collate.h"
#include "strata/text/tokenizer.h"
#include "strata/train/run_config.h"

namespace strata::train {

ExtractiveOptions extractive_options(const Config& run) {
  ExtractiveOptions options;
  options.max_tokens = data_options(run).truncation.max_source_tokens;
  options.oracle_sentences = static_cast<std::size_t>(run.get<std::int64_t>("extract.oracle_sentences"));
  return options;
}

ExtractiveSelection extractive_selection(const Config& run) {
  ExtractiveSelection selection;
  selection.top_k = static_cast<std::size_t>(run.get<std::int64_t>("extract.top_k"));
  selection.trigram_blocking = run.get<bool>("extract.trigram_blocking");
  return selection;
}


namespace {

struct ExtractiveBatch : models::EncoderBatch {
  at::Tensor labels;  // [S] int64: the rows' sentence labels, row by row
};

ExtractiveBatch collate(std::span<const ExtractiveExample> examples, std::span<const std::size_t> rows,
                        std::int64_t pad_id, bool with_layout) {
  std::vector<const Layout*> layouts;
  std::vector<std::int64_t> labels;
  for (const std::size_t r : rows) {
    layouts.push_back(&examples[r].layout);
    labels.insert(labels.end(), examples[r].labels.begin(), examples[r].labels.end());
  }
  ExtractiveBatch batch{models::collate_encoder(layouts, pad_id, with_layout), {}};
  batch.labels = torch::tensor(labels, torch::kInt64);
  return batch;
}

// The marker logits [S, 2] of the batch, one row per sentence in the order of its labels.
at::Tensor sentence_logits(models::EncoderModel& model, const ExtractiveBatch& batch) {
  const bool with_layout = batch.layout.token.defined();
  const at::Tensor logits = model->forward(batch.ids, batch.padding, with_layout ? &batch.layout : nullptr).logits;
  if (logits.size(0) != batch.labels.size(0))
    throw Error(fmt::format("extractive task: the model found {} marker tokens (model.marker_id {}) in a batch of "
                            "{} sentences",
                            logits.size(0), model->config().marker_id, batch.labels.size(0)));
  return logits;
}

std::vector<std::size_t> all_rows(std::size_t begin, std::size_t end) {
  std::vector<std::size_t> rows(end - begin);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = begin + i;
  return rows;
}

}  // namespace

std::vector<std::vector<float>> sentence_scores(models::EncoderModel& model,
                                                std::span<const ExtractiveExample> examples,
                                                std::size_t batch_rows, Progress* progress) {
  torch::NoGradGuard no_grad;
  const std::int64_t pad_id = model->config().pad_id;
  std::vector<std::vector<float>> scores;
  scores.reserve(examples.size());
  const std::size_t step = std::max<std::size_t>(batch_rows, 1);
  for (std::size_t begin = 0; begin < examples.size(); begin += step) {
    const std::size_t end = std::min(examples.size(), begin + step);
    const std::vector<std::size_t> rows = all_rows(begin, end);
    const ExtractiveBatch batch = collate(examples, rows, pad_id, model->uses_layout());
    const at::Tensor probabilities =
        torch::softmax(sentence_logits(model, batch), -1).select(1, 1).to(torch::kFloat32).contiguous();
    const float* p = probabilities.data_ptr<float>();
    for (std::size_t r = begin; r < end; ++r) {
      scores.emplace_back(p, p + examples[r].sentences.size());
      p += examples[r].sentences.size();
      if (progress) progress->add();
    }
  }
  return scores;
}

std::vector<std::string> extractive_summaries(std::span<const ExtractiveExample> examples,
                                              const std::vector<std::vector<float>>& scores,
                                              const ExtractiveSelection& selection) {
  std::vector<std::string> summaries;
  summaries.reserve(examples.size());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const std::vector<std::size_t> chosen =
        select_sentences(scores.at(i), examples[i].sentences, selection.top_k, selection.trigram_blocking);
    summaries.push_back(join_sentences(examples[i].sentences, chosen));
  }
  return summaries;
}

ExtractiveTask::ExtractiveTask(models::EncoderModel model, const Tokenizer& tokenizer,
                               std::vector<ExtractiveExample> train, std::vector<ExtractiveExample> valid,
                               ExtractiveSelection selection)
    : model_(std::move(model)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(extractive_costs(train_)),
      valid_costs_(extractive_costs(valid_)),
      selection_(selection) {
  const models::ModelConfig& config = model_->config();
  if (config.head != models::EncoderHead::Marker)
    throw Error(fmt::format("model.head: extractive summarisation needs the 'marker' head (one vector per "
                            "sentence), not '{}'",
                            models::encoder_head_name(config.head)));
  if (config.num_labels != 2)
    throw Error(fmt::format("model.num_labels: extractive summarisation labels sentences in or out (2), not {}",
                            config.num_labels));
  const std::optional<std::int32_t> sep = tokenizer.sep_id();
  if (!sep)
    throw Error(fmt::format("extractive summarisation needs a tokenizer with a sep token; this {} tokenizer has none",
                            tokenizer.kind()));
  if (config.marker_id != *sep)
    throw Error(fmt::format("model.marker_id: {} is not the tokenizer's sep token ({}), which closes every sentence",
                            config.marker_id, *sep));
}

const std::vector<std::size_t>& ExtractiveTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss ExtractiveTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  const ExtractiveBatch batch =
      collate(split == Split::Train ? train_ : valid_, rows, model_->config().pad_id, model_->uses_layout());
  const at::Tensor logits = sentence_logits(model_, batch);
  return {token_loss_sum(logits, batch.labels, label_smoothing), batch.labels.size(0), batch.tokens};
}

AnalysisBatch ExtractiveTask::analysis_batch(Split split, std::span<const std::size_t> rows) {
  std::vector<const Layout*> layouts;
  for (const std::size_t r : rows) layouts.push_back(&(split == Split::Train ? train_ : valid_)[r].layout);
  return encoder_analysis_batch(model_, layouts);
}

std::map<std::string, double> ExtractiveTask::extra_metrics(std::int64_t documents) {
  const std::size_t n = std::min(valid_.size(), static_cast<std::size_t>(std::max<std::int64_t>(documents, 0)));
  if (n == 0) return {};
  const std::span<const ExtractiveExample> subset(valid_.data(), n);
  const std::vector<std::string> summaries = extractive_summaries(subset, sentence_scores(model_, subset), selection_);
  std::vector<std::string> references;
  for (const ExtractiveExample& example : subset) references.push_back(example.reference);
  return mean_rouge_f(references, summaries);
}

}  // namespace strata::train
