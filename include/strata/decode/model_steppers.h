#pragma once
// StepModels for strata's models: the seq2seq decoder over a fixed encoder output, and the
// causal LM after a prompt. With use_cache each step feeds only the new tokens and reuses the
// keys and values of earlier positions; without it each step re-runs the whole prefix (the
// slow path, kept to check the cache and to measure what it saves).
#include <ATen/core/Tensor.h>

#include "strata/decode/step_model.h"
#include <memory>

#include "strata/models/language_model.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/kv_cache.h"

namespace strata::decode {

class Seq2SeqStepper : public StepModel {
 public:
  Seq2SeqStepper(models::Seq2Seq model, models::EncoderOutput encoded, bool use_cache);
  std::int64_t rows() const override { return rows_; }
  at::Tensor step(const at::Tensor& tokens) override;
  void reorder(const at::Tensor& index) override;

 private:
  models::Seq2Seq model_;
  models::EncoderOutput encoded_;
  bool use_cache_;
  std::int64_t rows_;
  nn::KvCache cache_;
  at::Tensor history_;  // [N, T] tokens so far, without the cache
};

// Continues prompts of equal length ([B, T] int64, T >= 1), or prompts of several lengths
// left-padded to one with `padding` ([B, T] true = real; needs the cache; each row's positions
// count its real tokens, as transformers numbers them). The prompt minus its last token is
// run at construction; the first step() feeds each prompt's last token in place of the start
// token generate() passes, so the rows of a batch may end differently.
class CausalLmStepper : public StepModel {
 public:
  CausalLmStepper(std::shared_ptr<models::LanguageModel> model, const at::Tensor& prompts, bool use_cache,
                  const at::Tensor& padding = {});
  std::int64_t rows() const override { return history_.size(0); }
  at::Tensor step(const at::Tensor& tokens) override;
  void reorder(const at::Tensor& index) override;

 private:
  std::shared_ptr<models::LanguageModel> model_;
  bool use_cache_;
  nn::KvCache cache_;
  at::Tensor history_;  // [N, T] every token fed so far
  at::Tensor pending_;  // [B] the prompts' last tokens until the first step
};

}  // namespace strata::decode
