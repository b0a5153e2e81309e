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

// The log-probability of each token of `ids` given the tokens before it (no grad, eval mode):
// ids.size() - 1 values, for tokens 1 on. The text is read in consecutive windows of `window`
// tokens, each starting afresh (0: the model's max_length(), or the whole text in one pass for
// a model without a limit, such as a Block-State Transformer). strata::Error when `window`
// exceeds the model's limit.
struct TokenScores {
  std::vector<double> log_probs;
  std::size_t window = 0;  // the window read; 0 = one pass
};
TokenScores token_log_probs(models::LanguageModel& model, const std::vector<std::int32_t>& ids,
                            std::size_t window = 0);

}  // namespace strata::train
