#include "strata/train/lm_task.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/data/token_batches.h"
#include "strata/models/collate.h"

namespace strata::train {

namespace {

std::vector<std::size_t> block_costs(const TokenBlocks& blocks) {
  std::vector<std::size_t> costs;
  costs.reserve(blocks.size());
  for (const auto& b : blocks) costs.push_back(b.size() - 1);
  return costs;
}

BatchLoss block_loss(models::LanguageModel& model, const TokenBlocks& blocks, std::span<const std::size_t> rows,
                     double label_smoothing) {
  const models::LmBatch batch = models::collate_lm(blocks, rows, model.config().pad_id);
  return {token_loss_sum(model.logits(batch.inputs), batch.labels, label_smoothing), batch.tokens, batch.tokens};
}

}  // namespace

LmTask::LmTask(std::shared_ptr<models::LanguageModel> model, TokenBlocks train, TokenBlocks valid)
    : model_(std::move(model)),
      train_(std::move(train)),
      valid_(std::move(valid)),
      train_costs_(block_costs(train_)),
      valid_costs_(block_costs(valid_)) {}

const std::vector<std::size_t>& LmTask::costs(Split split) const {
  return split == Split::Train ? train_costs_ : valid_costs_;
}

BatchLoss LmTask::loss(Split split, std::span<const std::size_t> rows, double label_smoothing) {
  return block_loss(*model_, split == Split::Train ? train_ : valid_, rows, label_smoothing);
}

double lm_loss(models::LanguageModel& model, const TokenBlocks& blocks, std::size_t max_tokens) {
  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  double total = 0;
  std::int64_t tokens = 0;
  for (const auto& rows : plan_batches_in_order(block_costs(blocks), max_tokens)) {
    const BatchLoss batch = block_loss(model, blocks, rows, 0.0);
    total += batch.loss_sum.item<double>();
    tokens += batch.labels;
  }
  model.train(was_training);
  return total / static_cast<double>(std::max<std::int64_t>(tokens, 1));
}

TokenScores token_log_probs(models::LanguageModel& model, const std::vector<std::int32_t>& ids,
                            std::size_t window) {
  const std::size_t model_limit = static_cast<std::size_t>(std::max<std::int64_t>(model.max_length(), 0));
  if (window > 0 && model_limit > 0 && window > model_limit)
    throw Error("a window of " + std::to_string(window) + " tokens: the model reads at most " +
                std::to_string(model_limit) + " (model.max_positions)");
  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  TokenScores out{{}, window > 0 ? window : model_limit};
  const std::size_t limit = std::max<std::size_t>(2, out.window > 0 ? out.window : ids.size());
  // A window predicts tokens [start + 1, end) from [start, end - 1); the next starts at end - 1.
  for (std::size_t start = 0; start + 1 < ids.size(); start += limit - 1) {
    const std::size_t end = std::min(ids.size(), start + limit);
    const at::Tensor piece =
        torch::tensor(std::vector<std::int64_t>(ids.begin() + static_cast<std::ptrdiff_t>(start),
                                                ids.begin() + static_cast<std::ptrdiff_t>(end)))
            .unsqueeze(0);
    const at::Tensor log_probs = torch::log_softmax(model.logits(piece.narrow(1, 0, piece.size(1) - 1)), -1);
    const at::Tensor picked = log_probs.gather(2, piece.narrow(1, 1, piece.size(1) - 1).unsqueeze(-1));
    const at::Tensor values = picked.reshape({-1}).to(torch::kDouble).contiguous();
    out.log_probs.insert(out.log_probs.end(), values.data_ptr<double>(), values.data_ptr<double>() + values.numel());
  }
  model.train(was_training);
  return out;
}

}  // namespace strata::train
