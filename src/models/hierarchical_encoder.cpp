#include "strata/models/hierarchical_encoder.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"

namespace strata::models {

namespace rnn = torch::nn::utils::rnn;

SentenceBatch collate_sentences(std::span<const SentenceExtractionExample> examples,
                                std::span<const std::size_t> rows, std::int64_t pad_id) {
  std::size_t max_sentences = 0, max_tokens = 0;
  for (std::size_t row : rows) {
    const SentenceExtractionExample& e = examples[row];
    if (e.sentence_ids.empty()) throw Error("collate_sentences: example '" + e.id + "' has no sentences");
    max_sentences = std::max(max_sentences, e.sentence_ids.size());
    for (const auto& sentence : e.sentence_ids) max_tokens = std::max(max_tokens, sentence.size());
  }
  const auto B = static_cast<std::int64_t>(rows.size()), S = static_cast<std::int64_t>(max_sentences),
             T = static_cast<std::int64_t>(max_tokens);
  SentenceBatch batch;
  batch.tokens = torch::full({B, S, T}, pad_id, torch::kInt64);
  batch.token_counts = torch::zeros({B, S}, torch::kInt64);
  batch.sentence_counts = torch::zeros({B}, torch::kInt64);
  auto tokens = batch.tokens.accessor<std::int64_t, 3>();
  auto token_counts = batch.token_counts.accessor<std::int64_t, 2>();
  for (std::int64_t b = 0; b < B; ++b) {
    const SentenceExtractionExample& e = examples[rows[static_cast<std::size_t>(b)]];
    batch.sentence_counts[b] = static_cast<std::int64_t>(e.sentence_ids.size());
    for (std::size_t s = 0; s < e.sentence_ids.size(); ++s) {
      const auto& sentence = e.sentence_ids[s];
      token_counts[b][static_cast<std::int64_t>(s)] = static_cast<std::int64_t>(sentence.size());
      for (std::size_t t = 0; t < sentence.size(); ++t) tokens[b][static_cast<std::int64_t>(s)][static_cast<std::int64_t>(t)] = sentence[t];
      batch.tokens_read += static_cast<std::int64_t>(sentence.size());
    }
  }
  batch.sentence_mask = batch.token_counts > 0;
  return batch;
}

HierarchicalEncoderImpl::HierarchicalEncoderImpl(const ModelConfig& config) : hidden_(config.lstm_hidden) {
  embed_tokens = register_module(
      "embed_tokens", torch::nn::Embedding(torch::nn::EmbeddingOptions(config.vocab_size, config.d_model)
                                               .padding_idx(config.pad_id)));
  auto lstm = [&](std::int64_t input) {
    return torch::nn::LSTM(torch::nn::LSTMOptions(input, config.lstm_hidden)
                               .num_layers(config.lstm_layers)
                               .bidirectional(true)
                               .batch_first(true)
                               .dropout(config.lstm_layers > 1 ? config.dropout : 0.0));
  };
  token_lstm = register_module("token_lstm", lstm(config.d_model));
  sentence_lstm = register_module("sentence_lstm", lstm(2 * config.lstm_hidden));
  dropout = register_module("dropout", torch::nn::Dropout(config.dropout));
}

HierarchicalEncoding HierarchicalEncoderImpl::forward(const SentenceBatch& batch) {
  const std::int64_t B = batch.tokens.size(0), S = batch.tokens.size(1), T = batch.tokens.size(2);
  // Token level: only the real sentences, packed so that each direction's last state is
  // taken at the sentence's own last token, not at the padding.
  const at::Tensor counts = batch.token_counts.reshape({B * S});
  const at::Tensor real = torch::nonzero(counts > 0).squeeze(1);
  const at::Tensor words = dropout(embed_tokens(batch.tokens.reshape({B * S, T}).index_select(0, real)));
  const auto packed = rnn::pack_padded_sequence(words, counts.index_select(0, real), /*batch_first=*/true,
                                                /*enforce_sorted=*/false);
  const at::Tensor last = std::get<0>(std::get<1>(token_lstm->forward_with_packed_input(packed)));
  const std::int64_t layers = last.size(0);
  const at::Tensor vectors = torch::cat({last[layers - 2], last[layers - 1]}, 1);  // [R, 2H]
  const at::Tensor sentences =
      torch::zeros({B * S, 2 * hidden_}, vectors.options()).index_copy(0, real, vectors).reshape({B, S, 2 * hidden_});
  // Sentence level, packed by each document's sentence count.
  const auto packed_sentences =
      rnn::pack_padded_sequence(dropout(sentences), batch.sentence_counts, /*batch_first=*/true,
                                /*enforce_sorted=*/false);
  const auto read = std::get<0>(sentence_lstm->forward_with_packed_input(packed_sentences));
  const at::Tensor document = std::get<0>(rnn::pad_packed_sequence(read, /*batch_first=*/true, 0.0, S));
  return {sentences, dropout(document)};
}

}  // namespace strata::models
