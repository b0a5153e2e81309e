#include "strata/train/task.h"

#include <torch/torch.h>

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

}  // namespace strata::train
