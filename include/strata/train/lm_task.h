#pragma once
// Language modelling as a TrainTask: next-token cross-entropy over blocks of concatenated
// text. Perplexity is exp of the validation loss.
#include <cstdint>
#include <vector>

#include <memory>

#include "strata/models/language_model.h"
#include "strata/train/task.h"

namespace strata::train {

using TokenBlocks = std::vector<std::vector<std::int32_t>>;

class LmTask : public TrainTask {
 public:
  LmTask(std::shared_ptr<models::LanguageModel> model, TokenBlocks train, TokenBlocks valid);
  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(Split split) const override;
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override;

 private:
  std::shared_ptr<models::LanguageModel> model_;
  TokenBlocks train_, valid_;
  std::vector<std::size_t> train_costs_, valid_costs_;
};

// Mean next-token loss of the model over the blocks (no grad, eval mode), batched under
// max_tokens; perplexity = exp(loss).
double lm_loss(models::LanguageModel& model, const TokenBlocks& blocks, std::size_t max_tokens);

}  // namespace strata::train
