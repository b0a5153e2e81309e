#include "strata/decode/model_steppers.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::decode {

Seq2SeqStepper::Seq2SeqStepper(models::Seq2Seq model, models::EncoderOutput encoded, bool use_cache)
    : model_(std::move(model)),
      encoded_(std::move(encoded)),
      use_cache_(use_cache),
      rows_(encoded_.hidden.size(0)),
      cache_(model_->new_cache()) {}

at::Tensor Seq2SeqStepper::step(const at::Tensor& tokens) {
  const at::Tensor column = tokens.to(model_->shared->weight.device(), torch::kInt64).view({-1, 1});
  at::Tensor hidden;
  if (use_cache_) {
    hidden = model_->decode(column, encoded_, &cache_);
    // The cache now holds the encoder output's keys and values: the hidden states are no
    // longer read, so stop reordering them each step.
    encoded_.hidden = at::Tensor();
  } else {
    history_ = history_.defined() ? torch::cat({history_, column}, 1) : column;
    hidden = model_->decode(history_, encoded_).narrow(1, -1, 1);
  }
  return torch::log_softmax(model_->next_token_scores(hidden.squeeze(1), encoded_, column), -1);
}

void Seq2SeqStepper::reorder(const at::Tensor& index) {
  // The source's side was copied row for row with the cache's cross keys and values: where the
  // cache keeps those, it is the same after the reorder too.
  if (!cache_.reorder(index)) {
    if (encoded_.hidden.defined()) encoded_.hidden = encoded_.hidden.index_select(0, index);
    if (encoded_.padding.defined()) encoded_.padding = encoded_.padding.index_select(0, index);
    if (encoded_.layout) encoded_.layout = attn::select_items(*encoded_.layout, index);
    if (encoded_.source.defined()) encoded_.source = encoded_.source.index_select(0, index);
    if (encoded_.copy_keys.defined()) encoded_.copy_keys = encoded_.copy_keys.index_select(0, index);
  }
  if (history_.defined()) history_ = history_.index_select(0, index);
  rows_ = index.size(0);
}

CausalLmStepper::CausalLmStepper(std::shared_ptr<models::LanguageModel> model, const at::Tensor& prompts, bool use_cache,
                                 const at::Tensor& padding)
    : model_(std::move(model)), use_cache_(use_cache), cache_(model_->new_cache()) {
  if (prompts.dim() != 2 || prompts.size(1) < 1) throw Error("causal LM decoding: prompts must be [B, T] with T >= 1");
  history_ = prompts.to(torch::kInt64).narrow(1, 0, prompts.size(1) - 1);
  pending_ = prompts.to(torch::kInt64).select(1, -1);
  if (padding.defined()) {
    if (padding.sizes() != prompts.sizes()) throw Error("causal LM decoding: the padding's shape is not the prompts'");
    if (!padding.select(1, -1).all().item<bool>())
      throw Error("causal LM decoding: prompts of several lengths must be padded on the left (each row's last token real)");
    if (!use_cache_) throw Error("causal LM decoding: left-padded prompts decode with the key/value cache");
  }
  if (use_cache_ && history_.size(1) > 0)
    model_->logits(history_, &cache_, padding.defined() ? padding.narrow(1, 0, history_.size(1)) : padding);
}

at::Tensor CausalLmStepper::step(const at::Tensor& tokens) {
  const at::Tensor column = (pending_.defined() ? pending_ : tokens.to(history_.device(), torch::kInt64)).view({-1, 1});
  pending_ = at::Tensor();
  history_ = torch::cat({history_, column}, 1);
  const at::Tensor logits = use_cache_ ? model_->logits(column, &cache_) : model_->logits(history_);
  return torch::log_softmax(logits.select(1, -1), -1);
}

void CausalLmStepper::reorder(const at::Tensor& index) {
  history_ = history_.index_select(0, index);
  cache_.reorder(index);
}

}  // namespace strata::decode
