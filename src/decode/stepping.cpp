#include "stepping.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "strata/core/error.h"

namespace strata::decode {

at::Tensor next_scores(StepModel& model, const at::Tensor& tokens,
                       const GenerationOptions& options) {
  const at::Tensor scores = model.step(tokens);
  if (scores.dim() != 2 || scores.size(0) != tokens.size(0))
    throw Error(fmt::format("decode: the model returned log-probabilities of shape [{}] for {} "
                            "rows; expected [rows, vocabulary]",
                            fmt::join(scores.sizes(), ", "), tokens.size(0)));
  const std::int64_t vocab = scores.size(1);
  for (const auto& [field, id] : {std::pair<std::string_view, std::int64_t>{"start_id", options.start_id},
                                  {"eos_id", options.eos_id},
                                  {"pad_id", options.pad_id}})
    if (id >= vocab)
      throw Error(fmt::format("generation.{}: token {} is outside the model's vocabulary of {}",
                              field, id, vocab));
  return scores.to(at::kFloat);
}

std::vector<std::int64_t> until_eos(const std::int64_t* tokens, std::int64_t length,
                                    std::int64_t eos_id) {
  const std::int64_t* end = std::find(tokens, tokens + length, eos_id);
  return {tokens, end == tokens + length ? end : end + 1};
}

}  // namespace strata::decode
