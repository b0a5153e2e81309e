#pragma once
// The per-step edits of next-token scores ([N, V] float log-probabilities or logits) that
// the searches share, all rows at once. Each returns a new tensor; banned tokens get -inf.
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "strata/decode/generation_options.h"

namespace strata::decode {

// history: [N, T] int64, the tokens each row has generated so far (T is the same for all
// rows). Applies min_length (eos banned while T < min_length), no_repeat_ngram_size and the
// forced first and last tokens (every other token banned at T = 0, or T = max_length - 1).
at::Tensor constrain(const at::Tensor& scores, const at::Tensor& history,
                     const GenerationOptions& options);

// Bans every token that would complete an n-gram (n >= 1) already present in the row's
// history; nothing while the history is shorter than n.
at::Tensor ban_repeated_ngrams(const at::Tensor& scores, const at::Tensor& history,
                               std::int64_t n);

// What sampling draws from, per row: candidate tokens and their logits (-inf = filtered
// out) after dividing by the temperature, then top-k, then top-p. Without top-k and top-p
// every token is a candidate, in vocabulary order; with them the candidates come most likely
// first and there are k of them (top-k: exactly k, ties at the k-th broken as torch.topk does)
// or V. Top-p keeps the smallest set of most likely candidates whose probability (softmax
// over the candidates) reaches p; the most likely one is always kept.
struct SamplingCandidates {
  at::Tensor tokens;  // [N, C] int64
  at::Tensor logits;  // [N, C] float
};
SamplingCandidates sampling_candidates(const at::Tensor& scores, const GenerationOptions& options);

}  // namespace strata::decode
