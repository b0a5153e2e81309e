#include "row_search.h"

#include <torch/torch.h>

#include "stepping.h"
#include "strata/decode/logits_processing.h"

namespace strata::decode {

Sequences row_search(StepModel& model, const GenerationOptions& options,
                     const ChooseTokens& choose, const StepObserver& observer) {
  options.check();
  torch::NoGradGuard no_grad;
  const std::int64_t rows = model.rows();
  if (rows == 0) return {};
  at::Tensor tokens = at::full({rows}, options.start_id, at::kLong);
  at::Tensor history;   // [rows, max_length] generated tokens, pad beyond `length`
  at::Tensor finished;  // [rows] bool: eos produced
  std::int64_t length = 0;
  while (length < options.max_length) {
    at::Tensor scores = next_scores(model, tokens, options);
    if (length == 0) {
      history = at::full({rows, options.max_length}, options.pad_id,
                         scores.options().dtype(at::kLong));
      finished = at::zeros({rows}, scores.options().dtype(at::kBool));
    }
    scores = constrain(scores, history.narrow(1, 0, length), options);
    tokens = choose(scores, finished).masked_fill(finished, options.pad_id);
    history.select(1, length).copy_(tokens);
    ++length;
    finished |= tokens == options.eos_id;
    if (observer) {
      const at::Tensor chosen = tokens.cpu().contiguous();
      const std::int64_t* data = chosen.data_ptr<std::int64_t>();
      if (!observer(std::vector<std::int64_t>(data, data + chosen.numel()))) break;
    }
    if (finished.all().item<bool>()) break;
  }
  const at::Tensor generated = history.narrow(1, 0, length).cpu().contiguous();
  const std::int64_t* data = generated.data_ptr<std::int64_t>();
  Sequences sequences;
  for (std::int64_t row = 0; row < rows; ++row)
    sequences.push_back(until_eos(data + row * length, length, options.eos_id));
  return sequences;
}

}  // namespace strata::decode
