#include "strata/train/mlm_task.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/core/split_mix64.h"
#include "strata/data/mlm_examples.h"
#include "strata/data/token_batches.h"
#include "strata/models/collate.h"

namespace strata::train {

namespace {

constexpr std::uint64_t kValidationMaskSeed = 0x6D6C6D76616CULL;

struct MlmBatch : models::EncoderBatch {
  at::Tensor chosen;  // [B, L] bool: the positions the loss scores
  at::Tensor labels;  // [M] int64: their original tokens, row-major
};

// The rows' chunks masked as `seed` and `epoch` draw. The layouts carry the masked tokens
// too: a pattern that reads token ids (matching_token) must not see the originals.
MlmBatch collate(std::span<const Layout> chunks, std::span<const std::size_t> rows, const MlmMasking& masking,
                 std::uint64_t seed, std::uint64_t epoch, std::int64_t pad_id, bool with_layout) {
  std::vector<Layout> masked;
  std::vector<std::vector<std::int64_t>> row_labels;
  for (const std::size_t r : rows) {
    MaskedTokens tokens = mask_tokens(chunks[r].token, masking.vocabulary, masking.probability,
                                      SplitMix64({seed, epoch, static_cast<std::uint64_t>(r)}).next());
    masked.push_back(chunks[r]);
    masked.back().token = std::move(tokens.inputs);
    row_labels.push_back(std::move(tokens.labels));
  }
  std::vector<const Layout*> layouts;
  for (const Layout& layout : masked) layouts.push_back(&layout);
  MlmBatch batch{models::collate_encoder(layouts, pad_id, with_layout), {}, {}};
  batch.chosen = torch::zeros_like(batch.ids, torch::kBool);
  auto chosen = batch.chosen.accessor<bool, 2>();
  std::vector<std::int64_t> labels;
  for (std::size_t i = 0; i < row_labels.size(); ++i)
    for (std::size_t t = 0; t < row_labels[i].size(); ++t) {
      if (row_labels[i][t] == kUnscoredLabel) continue;
      chosen[static_cast<std::int64_t>(i)][static_cast<std::int64_t>(t)] = true;
      labels.push_back(row_labels[i][t]);
    }
  batch.labels = torch::tensor(labels, torch::kInt64);
  return batch;
}

// The token head's logits [M, V] at the chosen positions only, as BERT computes its masked-LM
// output: the same dropout and classifier as EncoderModel's token head, without the logits of
// the other ~85 % of the tokens over the whole vocabulary.
at::Tensor chosen_logits(models::EncoderModel& model, const MlmBatch& batch) {
  const at::Tensor hidden = model->encode(batch.ids, batch.padding, batch.layout.batch() > 0 ? &batch.layout : nullptr);
  const at::Tensor vectors = hidden.index({batch.chosen});
  return model->classifier(torch::dropout(vectors, model->config().dropout, model->is_training()));
}

void check_model(const models::ModelConfig& config, std::span<const Layout> train, std::span<const Layout> valid) {
  if (config.head != models::EncoderHead::Token)
    throw Error("model.head: masked-LM pretraining predicts a token at each masked position and needs the 'token' "
                "head; the model has '" + models::encoder_head_name(config.head) + "'");
  if (config.num_labels != config.vocab_size)
    throw Error("model.num_labels: masked-LM pretraining has one label per vocabulary token (" +
                std::to_string(config.vocab_size) + "); the model has " + std::to_string(config.num_labels));
  std::size_t longest = 0;
  for (const auto split : {train, valid})
    for (const Layout& chunk : split) longest = std::max(longest, chunk.size());
  if (static_cast<std::int64_t>(longest) > config.max_positions)
    throw Error("model.max_positions: masked-LM chunks have up to " + std::to_string(longest) +
                " tokens (data.max_source_tokens), more than the model's " + std::to_string(config.max_positions) +
                " positions");
}

}  // namespace

MlmTask::MlmTask(models::EncoderModel model, std::vector<Layout> train, std::vector<Layout> valid, MlmMasking masking)
    : model_(std::move(model)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(chunk_costs(train_)),
      valid_costs_(chunk_costs(valid_)),
      masking_(std::move(masking)) {
  check_mlm_probability(masking_.probability);
  check_model(model_->config(), train_, valid_);
}

const std::vector<std::size_t>& MlmTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss MlmTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  const bool training = split == Split::Train;
  const MlmBatch batch = collate(training ? train_ : valid_, rows, masking_, training ? masking_.seed : kValidationMaskSeed,
                                 training ? static_cast<std::uint64_t>(epoch_) : 0, model_->config().pad_id,
                                 model_->uses_layout());
  return {token_loss_sum(chosen_logits(model_, batch), batch.labels, label_smoothing), batch.labels.size(0),
          batch.tokens};
}

std::map<std::string, double> MlmTask::extra_metrics(std::int64_t documents) {
  const std::size_t n = std::min(valid_.size(), static_cast<std::size_t>(std::max<std::int64_t>(documents, 0)));
  if (n == 0) return {};
  std::int64_t correct = 0, chosen = 0;
  for (const std::vector<std::size_t>& rows : plan_batches_in_order(std::span(valid_costs_).first(n), 4096)) {
    const MlmBatch batch = collate(valid_, rows, masking_, kValidationMaskSeed, 0, model_->config().pad_id,
                                   model_->uses_layout());
    correct += chosen_logits(model_, batch).argmax(-1).eq(batch.labels).sum().item<std::int64_t>();
    chosen += batch.labels.size(0);
  }
  return {{"mlm_accuracy", chosen > 0 ? static_cast<double>(correct) / static_cast<double>(chosen) : 0.0}};
}

AnalysisBatch MlmTask::analysis_batch(Split split, std::span<const std::size_t> rows) {
  std::vector<const Layout*> layouts;
  for (const std::size_t r : rows) layouts.push_back(&(split == Split::Train ? train_ : valid_)[r]);
  return encoder_analysis_batch(model_, layouts);
}

}  // namespace strata::train
