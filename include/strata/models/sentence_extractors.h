#pragma once
// Thesis ch. 2's extractors over the hierarchical encoder (models/hierarchical_encoder.h):
//  - Sent-CLF (Eqs. 2.1-2.2): d = tanh(W_d (1/N) sum_i d_i + b_d), o_i = sigmoid(W_o [d_i; d] + b_o),
//    trained with binary cross-entropy against the oracle's membership; at test the top k.
//  - Sent-PTR: an LSTM decoder whose input at step t is s of the sentence picked at t - 1 (a
//    learned start vector at t = 0), starting from tanh(W (1/N) sum_i d_i); Luong's dot
//    attention of its state h_t over d_1..d_N and a learned stop vector is the distribution over
//    the next pick (a_t itself; the context vector would only matter with input feeding, which
//    the thesis does not describe). Trained with per-step cross-entropy on the oracle's picks in
//    summary order, then stop. A sentence already picked cannot be picked again.
//    Stop rule (the thesis leaves it open): the stop vector ends a hypothesis; at most
//    max_steps picks; neither decoding nor training stops before the first pick (training
//    does for a document whose oracle is empty). Beam search keeps the
//    beam_size best partial hypotheses by summed log-probability (no length normalisation)
//    and returns the best finished one.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>

#include <cstddef>
#include <span>
#include <vector>

#include "strata/models/hierarchical_encoder.h"
#include "strata/models/model_config.h"

namespace strata::models {

struct ExtractorLoss {
  at::Tensor sum;            // summed over the targets
  std::int64_t targets = 0;  // sentences (CLF) or pointer steps (PTR)
};

struct ExtractionOptions {
  std::size_t top_k = 1;      // Sent-CLF: sentences chosen (the thesis: the mean summary length)
  std::size_t beam_size = 4;  // Sent-PTR
  std::size_t max_steps = 4;  // Sent-PTR: most sentences picked
};

// What training and `strata extract` need of an extractor, whichever it is.
class SentenceExtractor {
 public:
  virtual ~SentenceExtractor() = default;
  // oracles[b]: row b's oracle picks, indices into its sentences, in summary order.
  virtual ExtractorLoss loss(const SentenceBatch& batch, std::span<const std::vector<std::size_t>> oracles) = 0;
  // Per row, the chosen sentences: document order (CLF), pick order (PTR). Without grad.
  virtual std::vector<std::vector<std::size_t>> extract(const SentenceBatch& batch,
                                                        const ExtractionOptions& options) = 0;
};

class SentClfImpl : public torch::nn::Module, public SentenceExtractor {
 public:
  explicit SentClfImpl(const ModelConfig& config);
  at::Tensor forward(const SentenceBatch& batch);  // logits of o_i: [B, S]
  ExtractorLoss loss(const SentenceBatch& batch, std::span<const std::vector<std::size_t>> oracles) override;
  std::vector<std::vector<std::size_t>> extract(const SentenceBatch& batch, const ExtractionOptions& options) override;

  HierarchicalEncoder encoder{nullptr};
  torch::nn::Linear document_projection{nullptr}, output{nullptr};
};
TORCH_MODULE(SentClf);

class SentPtrImpl : public torch::nn::Module, public SentenceExtractor {
 public:
  explicit SentPtrImpl(const ModelConfig& config);
  ExtractorLoss loss(const SentenceBatch& batch, std::span<const std::vector<std::size_t>> oracles) override;
  std::vector<std::vector<std::size_t>> extract(const SentenceBatch& batch, const ExtractionOptions& options) override;
  // log p of `picks` for the one document of `batch`, step by step as decoding scores them:
  // the picks, then stop unless there are max_steps of them. For tests against search.
  double sequence_log_prob(const SentenceBatch& batch, const std::vector<std::size_t>& picks, std::size_t max_steps);

  HierarchicalEncoder encoder{nullptr};
  torch::nn::Linear initial_state{nullptr};
  torch::nn::LSTM decoder{nullptr};
  at::Tensor start, stop;  // [2H] each

 private:
  struct Decoding;
  // Row `row` of an encoded batch, ready to decode.
  Decoding begin(const HierarchicalEncoding& encoding, const SentenceBatch& batch, std::int64_t row);
};
TORCH_MODULE(SentPtr);

}  // namespace strata::models
