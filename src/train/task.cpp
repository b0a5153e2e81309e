#include "strata/train/task.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/eval/rouge.h"
#include "strata/models/collate.h"

namespace strata::train {

at::Tensor token_loss_sum(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing) {
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}),
                          F::CrossEntropyFuncOptions()
                              .ignore_index(models::kIgnoreLabel)
                              .label_smoothing(label_smoothing)
                              .reduction(torch::kSum));
}

std::map<std::string, double> mean_rouge_f(std::span<const std::string> references,
                                           std::span<const std::string> predictions) {
  if (references.size() != predictions.size())
    throw Error("mean_rouge_f: " + std::to_string(predictions.size()) + " predictions for " +
                std::to_string(references.size()) + " references");
  if (references.empty()) return {};
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, /*use_stemmer=*/true);
  std::map<std::string, double> totals;
  for (std::size_t i = 0; i < references.size(); ++i)
    for (const auto& [name, score] : scorer.score(references[i], predictions[i])) totals[name] += score.fmeasure;
  for (auto& [name, total] : totals) total /= static_cast<double>(references.size());
  return totals;
}

}  // namespace strata::train
