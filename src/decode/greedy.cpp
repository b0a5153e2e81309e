#include <torch/torch.h>

#include <tuple>

#include "row_search.h"

namespace strata::decode {

ChooseTokens greedy_choice() {
  return [](const at::Tensor& scores, const at::Tensor&) {
    return std::get<1>(scores.max(1));  // faster than argmax on the CPU (libtorch 1.13)
  };
}

Sequences greedy_search(StepModel& model, const GenerationOptions& options) {
  return row_search(model, options, greedy_choice());
}

}  // namespace strata::decode
