#pragma once
// What the decoding algorithms need from a model: the next-token log-probabilities of N
// hypotheses given the token each appended last, and a way to follow beam search's
// reordering. A seq2seq model (encoder output fixed) and a causal LM both provide it, with
// or without a key/value cache.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::decode {

class StepModel {
 public:
  virtual ~StepModel() = default;
  // Number of hypotheses rows the model currently holds.
  virtual std::int64_t rows() const = 0;
  // tokens: [N] int64, the last token of each hypothesis (the first call gets the start
  // token). Returns [N, V] float log-probabilities of the next token.
  virtual at::Tensor step(const at::Tensor& tokens) = 0;
  // Keeps rows `index` ([M] int64, any M) in that order; later steps see M rows.
  virtual void reorder(const at::Tensor& index) = 0;
};

}  // namespace strata::decode
