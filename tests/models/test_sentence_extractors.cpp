// Thesis ch. 2's extractors: the hierarchical encoder's packing, Sent-CLF's loss by Eqs.
// 2.1-2.2 by hand, Sent-PTR's teacher-forced loss against its step-by-step scoring, and its
// beam search against exhaustive search.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "strata/core/error.h"
#include "strata/models/sentence_extractors.h"

namespace strata::models {
namespace {

ModelConfig tiny(const char* architecture) {
  ModelConfig c;
  c.architecture = architecture;
  c.vocab_size = 30;
  c.d_model = 8;
  c.lstm_hidden = 6;
  c.lstm_layers = 1;
  c.pad_id = 0;
  c.dropout = 0.0;
  return c;
}

SentenceExtractionExample example(std::vector<std::vector<std::int32_t>> sentences, std::vector<std::size_t> oracle) {
  SentenceExtractionExample e;
  e.sentence_ids = std::move(sentences);
  for (std::size_t i = 0; i < e.sentence_ids.size(); ++i) e.sentences.push_back("s" + std::to_string(i));
  e.oracle = std::move(oracle);
  return e;
}

std::vector<SentenceExtractionExample> toy_batch() {
  return {example({{3, 4, 5}, {6, 7}, {8, 9, 10, 11}}, {2, 0}),
          example({{12}, {13, 14, 15, 16, 17}}, {1})};
}

SentenceBatch rows_of(const std::vector<SentenceExtractionExample>& examples, std::vector<std::size_t> rows) {
  return collate_sentences(examples, rows, 0);
}

TEST(CollateSentences, PadsSentencesAndTokens) {
  const auto examples = toy_batch();
  const SentenceBatch batch = rows_of(examples, {0, 1});
  EXPECT_EQ(batch.tokens.sizes(), (std::vector<std::int64_t>{2, 3, 5}));
  EXPECT_EQ(batch.sentence_counts[1].item<std::int64_t>(), 2);
  EXPECT_EQ(batch.token_counts[1][1].item<std::int64_t>(), 5);
  EXPECT_FALSE(batch.sentence_mask[1][2].item<bool>());
  EXPECT_EQ(batch.tokens_read, 15);
  EXPECT_EQ(batch.tokens[0][1][2].item<std::int64_t>(), 0);  // padding
}

TEST(HierarchicalEncoder, ADocumentEncodesAloneAsInABatch) {
  // Packing takes each direction's last state at the sentence's own end: padding a sentence
  // or a document in a batch changes nothing.
  torch::manual_seed(1);
  HierarchicalEncoder encoder(tiny("sent_clf"));
  encoder->eval();
  const auto examples = toy_batch();
  const HierarchicalEncoding both = encoder(rows_of(examples, {0, 1}));
  const HierarchicalEncoding second = encoder(rows_of(examples, {1}));
  EXPECT_TRUE(torch::allclose(both.sentences[1].slice(0, 0, 2), second.sentences[0], 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(both.document[1].slice(0, 0, 2), second.document[0], 1e-5, 1e-6));
  EXPECT_EQ(both.sentences[1][2].abs().sum().item<float>(), 0.0f);
  // The sentence vector is the token BiLSTM's last forward and first backward state.
  const at::Tensor words = encoder->embed_tokens(torch::tensor({13, 14, 15, 16, 17}, torch::kInt64)).unsqueeze(0);
  const at::Tensor out = std::get<0>(encoder->token_lstm(words));  // [1, 5, 2H]
  const at::Tensor expected = torch::cat({out[0][4].slice(0, 0, 6), out[0][0].slice(0, 6, 12)});
  EXPECT_TRUE(torch::allclose(second.sentences[0][1], expected, 1e-5, 1e-6));
}

TEST(SentClf, LossIsBinaryCrossEntropyOfEquations21And22) {
  torch::manual_seed(2);
  SentClf model(tiny("sent_clf"));
  model->eval();
  const auto examples = toy_batch();
  const SentenceBatch batch = rows_of(examples, {0, 1});
  const std::vector<std::vector<std::size_t>> oracles{{2, 0}, {1}};
  const ExtractorLoss loss = model->loss(batch, oracles);
  EXPECT_EQ(loss.targets, 5);
  const HierarchicalEncoding encoding = model->encoder(batch);
  double expected = 0;
  const std::vector<std::vector<float>> labels{{1, 0, 1}, {0, 1}};
  for (int b = 0; b < 2; ++b) {
    const int n = b == 0 ? 3 : 2;
    const at::Tensor d_i = encoding.document[b].slice(0, 0, n);
    const at::Tensor d = torch::tanh(torch::matmul(model->document_projection->weight, d_i.mean(0)) +
                                     model->document_projection->bias);  // Eq. 2.1
    for (int i = 0; i < n; ++i) {
      const double o = torch::sigmoid(torch::dot(model->output->weight[0], torch::cat({d_i[i], d})) +
                                      model->output->bias[0])
                           .item<double>();  // Eq. 2.2
      const double y = labels[b][i];
      expected -= y * std::log(o) + (1 - y) * std::log(1 - o);
    }
  }
  EXPECT_NEAR(loss.sum.item<double>(), expected, 1e-5);
}

TEST(SentClf, ExtractsTheTopKInDocumentOrder) {
  torch::manual_seed(3);
  SentClf model(tiny("sent_clf"));
  model->eval();
  const auto examples = toy_batch();
  const SentenceBatch batch = rows_of(examples, {0});
  const at::Tensor logits = model->forward(batch)[0];
  ExtractionOptions options;
  options.top_k = 2;
  const std::vector<std::size_t> chosen = model->extract(batch, options)[0];
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_LT(chosen[0], chosen[1]);
  const std::size_t left_out = 3 - chosen[0] - chosen[1];
  for (std::size_t i : chosen) EXPECT_GE(logits[static_cast<long>(i)].item<float>(), logits[static_cast<long>(left_out)].item<float>());
  options.top_k = 10;
  EXPECT_EQ(model->extract(batch, options)[0], (std::vector<std::size_t>{0, 1, 2}));
}

TEST(SentPtr, TeacherForcedLossIsTheStepByStepLogProbability) {
  torch::manual_seed(4);
  SentPtr model(tiny("sent_ptr"));
  model->eval();
  const auto examples = toy_batch();
  const std::vector<std::vector<std::size_t>> oracles{{2, 0}, {1}};
  const ExtractorLoss loss = model->loss(rows_of(examples, {0, 1}), oracles);
  EXPECT_EQ(loss.targets, 5);  // the picks, then stop, per row
  const double expected = -model->sequence_log_prob(rows_of(examples, {0}), {2, 0}, 4) -
                          model->sequence_log_prob(rows_of(examples, {1}), {1}, 4);
  EXPECT_NEAR(loss.sum.item<double>(), expected, 1e-4);
}

TEST(SentPtr, TheFirstPickIsDotAttentionOverTheSentences) {
  torch::manual_seed(5);
  SentPtr model(tiny("sent_ptr"));
  model->eval();
  const auto examples = toy_batch();
  const SentenceBatch batch = rows_of(examples, {0});
  const HierarchicalEncoding encoding = model->encoder(batch);
  const at::Tensor d = encoding.document[0];
  const at::Tensor h0 = torch::tanh(model->initial_state(d.mean(0, true))).unsqueeze(0);
  const at::Tensor h1 = std::get<0>(model->decoder(model->start.view({1, 1, -1}),
                                                   std::make_tuple(h0, torch::zeros_like(h0))))[0][0];
  // At the first step stop is not allowed: a softmax over the three sentences alone.
  const at::Tensor scores = torch::matmul(d, h1);
  const double expected = torch::log_softmax(scores, 0)[1].item<double>();
  EXPECT_NEAR(model->sequence_log_prob(batch, {1}, 1), expected, 1e-5);
}

TEST(SentPtr, BeamSearchFindsTheExhaustiveBest) {
  torch::manual_seed(6);
  SentPtr model(tiny("sent_ptr"));
  model->eval();
  const auto examples = toy_batch();
  const SentenceBatch batch = rows_of(examples, {0});
  for (std::size_t max_steps : {1u, 2u, 3u}) {
    // Every sequence of distinct sentences, 1 to max_steps long.
    std::vector<std::size_t> best;
    double best_score = -std::numeric_limits<double>::infinity();
    std::vector<std::size_t> order{0, 1, 2};
    std::vector<std::vector<std::size_t>> seen;
    do {
      for (std::size_t length = 1; length <= max_steps; ++length) {
        const std::vector<std::size_t> picks(order.begin(), order.begin() + static_cast<long>(length));
        if (std::find(seen.begin(), seen.end(), picks) != seen.end()) continue;
        seen.push_back(picks);
        const double score = model->sequence_log_prob(batch, picks, max_steps);
        if (score > best_score) best_score = score, best = picks;
      }
    } while (std::next_permutation(order.begin(), order.end()));
    ExtractionOptions wide;
    wide.beam_size = 100;
    wide.max_steps = max_steps;
    EXPECT_EQ(model->extract(batch, wide)[0], best) << "max_steps " << max_steps;
  }
}

TEST(SentenceExtractors, RejectSettingsOfOtherArchitectures) {
  ModelConfig config = tiny("sent_ptr");
  config.prefix_length = 4;
  EXPECT_THROW(SentPtr{config}, Error);
  EXPECT_THROW(SentClf{tiny("sent_ptr")}, Error);
}

}  // namespace
}  // namespace strata::models
