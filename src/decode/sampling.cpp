#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "row_search.h"
#include "strata/core/error.h"
#include "strata/decode/logits_processing.h"

namespace strata::decode {
namespace {

// One token per row by inverse-CDF sampling over the row's candidates: a uniform draw per
// row from the seeded CPU generator (only N numbers cross to the scores' device, so CUDA
// scores need no CUDA generator), located in the cumulative distribution.
at::Tensor draw(const at::Tensor& scores, const at::Tensor& finished,
                const GenerationOptions& options, at::Generator& generator) {
  // Finished rows (whose choice is discarded) may have every token banned: give them any
  // distribution rather than none.
  const SamplingCandidates candidates =
      sampling_candidates(scores.masked_fill(finished.unsqueeze(1), 0.0), options);
  const at::Tensor cdf = candidates.logits.softmax(1).cumsum(1);
  const at::Tensor total = cdf.narrow(1, cdf.size(1) - 1, 1);  // [N, 1]; NaN when all banned
  if (!(total > 0.5).all().item<bool>())
    throw Error("decode: every token of a row is banned (min_length, no_repeat_ngram_size)");
  const at::Tensor u = at::rand({scores.size(0), 1}, generator, cdf.scalar_type()).to(cdf.device());
  const at::Tensor index =
      at::searchsorted(cdf, u * total, /*out_int32=*/false, /*right=*/true);
  // u * total can round up to total: the last candidate with mass is the furthest allowed.
  const at::Tensor last = (cdf < total).sum(1, /*keepdim=*/true);
  return candidates.tokens.gather(1, at::minimum(index, last)).squeeze(1);
}

}  // namespace

ChooseTokens sampling_choice(const GenerationOptions& options) {
  // Copies of a Generator share its state: the function's copies draw one stream.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  return [options, generator](const at::Tensor& scores, const at::Tensor& finished) mutable {
    return draw(scores, finished, options, generator);
  };
}

Sequences sample(StepModel& model, const GenerationOptions& options) {
  return row_search(model, options, sampling_choice(options));
}

}  // namespace strata::decode
