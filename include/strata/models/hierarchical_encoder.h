#pragma once
// The hierarchical encoder of thesis ch. 2's extractors (after Cheng and Lapata 2016): a
// token-level BiLSTM reads each sentence and its last states in both directions make the
// sentence vector s_i; a sentence-level BiLSTM reads s_1..s_N and gives the document-aware d_i.
// Dropout (model.dropout, 0.5 in the thesis) on the embeddings and between the two levels.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/rnn.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/data/sentence_extraction_examples.h"
#include "strata/models/model_config.h"

namespace strata::models {

// Documents as sentences of tokens, padded on the right in both dimensions.
struct SentenceBatch {
  at::Tensor tokens;           // [B, S, T] int64, pad_id where there is no token
  at::Tensor token_counts;     // [B, S] int64, 0 for a padding sentence
  at::Tensor sentence_counts;  // [B] int64, at least 1
  at::Tensor sentence_mask;    // [B, S] bool, true = a real sentence
  std::int64_t tokens_read = 0;
};

// Rows `rows` of `examples`. strata::Error for an example without sentences.
SentenceBatch collate_sentences(std::span<const SentenceExtractionExample> examples,
                                std::span<const std::size_t> rows, std::int64_t pad_id);

struct HierarchicalEncoding {
  at::Tensor sentences;  // s_i: [B, S, 2H], zero at padding sentences
  at::Tensor document;   // d_i: [B, S, 2H], zero at padding sentences
};

class HierarchicalEncoderImpl : public torch::nn::Module {
 public:
  // Word embeddings of model.d_model, BiLSTMs of model.lstm_hidden units per direction and
  // model.lstm_layers layers.
  explicit HierarchicalEncoderImpl(const ModelConfig& config);
  HierarchicalEncoding forward(const SentenceBatch& batch);
  std::int64_t output_size() const { return 2 * hidden_; }

  torch::nn::Embedding embed_tokens{nullptr};
  torch::nn::LSTM token_lstm{nullptr}, sentence_lstm{nullptr};
  torch::nn::Dropout dropout{nullptr};

 private:
  std::int64_t hidden_ = 0;
};
TORCH_MODULE(HierarchicalEncoder);

}  // namespace strata::models
