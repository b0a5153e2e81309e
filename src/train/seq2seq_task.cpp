#include "strata/train/seq2seq_task.h"

#include <torch/torch.h>

#include "strata/decode/summarize.h"
#include "strata/models/collate.h"

namespace strata::train {

Seq2SeqTask::Seq2SeqTask(models::Seq2Seq model, const Tokenizer& tokenizer, std::vector<Seq2SeqExample> train,
                         std::vector<Seq2SeqExample> valid, std::int64_t max_length, ExampleRedraw redraw)
    : model_(std::move(model)),
      tokenizer_(tokenizer),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(seq2seq_costs(train_)),
      valid_costs_(seq2seq_costs(valid_)),
      max_length_(max_length),
      redraw_(std::move(redraw)) {
  if (!redraw_) return;
  loaded_.swap(train_);
  train_.resize(loaded_.size());
  start_epoch(0);
}

void Seq2SeqTask::start_epoch(std::int64_t epoch) {
  if (!redraw_ || epoch == epoch_) return;
  epoch_ = epoch;
  for (std::size_t i = 0; i < loaded_.size(); ++i) train_[i] = redraw_(loaded_[i], i, epoch);
  train_costs_ = seq2seq_costs(train_);
}

const std::vector<std::size_t>& Seq2SeqTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss Seq2SeqTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  const auto& config = model_->config();
  const models::Seq2SeqBatch batch = models::collate_seq2seq(split == Split::Train ? train_ : valid_, rows,
                                                             config.pad_id, config.decoder_start_id,
                                                             /*with_targets=*/true, model_->uses_layout());
  if (config.copy && label_smoothing == 0) {
    // The pointer-generator's loss from the labels' probabilities alone: no [B, T, V] mixture.
    const models::EncoderOutput encoded = model_->encode(batch.source, batch.source_padding, &batch.source_layout);
    const at::Tensor hidden = model_->decode(batch.decoder_inputs, encoded, nullptr, batch.decoder_padding);
    return {-model_->label_log_probs(hidden, encoded, batch.labels, batch.decoder_inputs).sum(), batch.target_tokens,
            batch.source_tokens + batch.target_tokens};
  }
  if (config.section_relation_head && split == Split::Train) {
    // MULTITASK: the relation loss is a mean; times the target tokens it weighs as much as the
    // summary's mean token loss once the sum is normalised. Validation scores the summary alone.
    const models::EncoderOutput encoded = model_->encode(batch.source, batch.source_padding, &batch.source_layout);
    const at::Tensor logits = model_->next_token_scores(
        model_->decode(batch.decoder_inputs, encoded, nullptr, batch.decoder_padding), encoded, batch.decoder_inputs);
    const at::Tensor relations = model_->section_relation_loss(encoded, batch.source_layout);
    return {token_loss_sum(logits, batch.labels, label_smoothing) +
                relations * static_cast<double>(batch.target_tokens),
            batch.target_tokens, batch.source_tokens + batch.target_tokens};
  }
  const at::Tensor logits =
      model_->forward(batch.source, batch.source_padding, batch.decoder_inputs, &batch.source_layout,
                      batch.decoder_padding);
  return {token_loss_sum(logits, batch.labels, label_smoothing), batch.target_tokens,
          batch.source_tokens + batch.target_tokens};
}

AnalysisBatch Seq2SeqTask::analysis_batch(Split split, std::span<const std::size_t> rows) {
  const models::ModelConfig& c = model_->config();
  models::Seq2SeqBatch b = models::collate_seq2seq(split == Split::Train ? train_ : valid_, rows, c.pad_id,
                                                   c.decoder_start_id, /*with_targets=*/false, /*with_layout=*/true);
  AnalysisBatch out{b.source, b.source_padding, b.source_layout, {}};
  out.forward = [model = model_, b]() mutable { model->encode(b.source, b.source_padding, &b.source_layout); };
  return out;
}

std::map<std::string, double> Seq2SeqTask::extra_metrics(std::int64_t documents) {
  const std::size_t n = std::min(valid_.size(), static_cast<std::size_t>(std::max<std::int64_t>(documents, 0)));
  if (n == 0) return {};
  decode::SummarizeOptions options;  // greedy: cheap enough to run at every evaluation
  options.generation.max_length = max_length_;
  const std::span<const Seq2SeqExample> subset(valid_.data(), n);
  const std::vector<std::string> summaries = decode::summarize(model_, tokenizer_, subset, options);
  std::vector<std::string> references;
  for (const Seq2SeqExample& example : subset) references.push_back(example.reference);
  return mean_rouge_f(references, summaries);
}

}  // namespace strata::train
