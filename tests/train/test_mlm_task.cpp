// MlmTask: BERT's masked-LM pretraining of a tiny encoder on a tiny repetitive corpus.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "strata/data/mlm_examples.h"
#include "strata/train/mlm_task.h"
#include "support/expect.h"

namespace strata::train {
namespace {

using test_support::error_of;

constexpr std::int32_t kCls = 1, kSep = 2, kMask = 3, kVocab = 24;

models::ModelConfig tiny_mlm_config() {
  models::ModelConfig c;
  c.architecture = "encoder";
  c.head = models::EncoderHead::Token;
  c.num_labels = kVocab;
  c.vocab_size = kVocab;
  c.d_model = 32;
  c.heads = 2;
  c.d_ff = 64;
  c.encoder_layers = 1;
  c.max_positions = 32;
  c.dropout = 0.0;
  c.pad_id = 0;
  return c;
}

MlmMasking masking() { return {{kMask, kVocab, {0, kCls, kSep, kMask}}, 0.15, 5}; }

// Chunks of a text that repeats one word, in sentences of 6: the tokens left unmasked say what
// a masked one was, so a model can learn to fill it in from its context alone.
std::vector<Layout> chunks(std::size_t tokens, std::int32_t word) {
  Layout text;
  text.tree.parent = {-1};
  text.tree.depth = {0};
  text.tree.heading = {""};
  for (std::size_t i = 0; i < tokens; ++i) {
    text.token.push_back(word);
    text.position.push_back(static_cast<std::int32_t>(i));
    text.section.push_back(0);
    text.paragraph.push_back(0);
    text.sentence.push_back(static_cast<std::int32_t>(i / 6));
    text.segment.push_back(0);
  }
  return cut_into_chunks(text, /*max_tokens=*/20, kCls, kSep, 1);
}

// The chunks of `tokens` tokens of each of the words 4..11.
std::vector<Layout> corpus(std::size_t tokens) {
  std::vector<Layout> out;
  for (std::int32_t word = 4; word < 12; ++word)
    for (Layout& chunk : chunks(tokens, word)) out.push_back(std::move(chunk));
  return out;
}

std::vector<std::size_t> all_rows(std::size_t n) {
  std::vector<std::size_t> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = i;
  return rows;
}

double mean_loss(MlmTask& task, Split split, std::size_t rows) {
  const BatchLoss batch = task.loss(split, all_rows(rows), 0.0);
  return batch.loss_sum.item<double>() / static_cast<double>(batch.labels);
}

TEST(MlmTask, AFewStepsLowerTheMaskedTokenLossOnARepetitiveCorpus) {
  torch::manual_seed(3);
  MlmTask task(models::EncoderModel(tiny_mlm_config()), corpus(36), corpus(18), masking());
  const std::size_t train_rows = task.costs(Split::Train).size(), valid_rows = task.costs(Split::Valid).size();
  ASSERT_EQ(train_rows, 16u);  // 2 chunks of 18 tokens a word
  torch::optim::AdamW optimizer(task.model().parameters(), torch::optim::AdamWOptions(3e-3));
  task.model().eval();
  const double first = mean_loss(task, Split::Valid, valid_rows);
  const double first_accuracy = task.extra_metrics(100).at("mlm_accuracy");
  task.model().train();
  for (int step = 0; step < 30; ++step) {
    task.start_epoch(step);  // fresh masks every step
    optimizer.zero_grad();
    const BatchLoss batch = task.loss(Split::Train, all_rows(train_rows), 0.0);
    (batch.loss_sum / batch.labels).backward();
    optimizer.step();
  }
  task.model().eval();
  torch::NoGradGuard no_grad;
  const double last = mean_loss(task, Split::Valid, valid_rows);
  const double last_accuracy = task.extra_metrics(100).at("mlm_accuracy");
  EXPECT_LT(last, 0.5 * first) << first << " -> " << last;
  EXPECT_GT(last_accuracy, first_accuracy + 0.3) << first_accuracy << " -> " << last_accuracy;
}

TEST(MlmTask, TrainingMasksChangeWithTheEpochAndValidationMasksNever) {
  torch::manual_seed(3);
  MlmTask task(models::EncoderModel(tiny_mlm_config()), corpus(18), corpus(18), masking());
  task.model().eval();
  torch::NoGradGuard no_grad;
  const std::vector<std::size_t> rows = all_rows(5);
  const BatchLoss epoch0 = task.loss(Split::Train, rows, 0.0), valid = task.loss(Split::Valid, rows, 0.0);
  EXPECT_EQ(epoch0.labels, 5 * 3);  // round(0.15 × 18) chosen of every chunk
  EXPECT_EQ(epoch0.tokens, 5 * 20);
  EXPECT_NE(epoch0.loss_sum.item<double>(), valid.loss_sum.item<double>());  // the same chunks, other masks
  task.start_epoch(1);
  EXPECT_NE(task.loss(Split::Train, rows, 0.0).loss_sum.item<double>(), epoch0.loss_sum.item<double>());
  task.start_epoch(0);
  EXPECT_EQ(task.loss(Split::Train, rows, 0.0).loss_sum.item<double>(), epoch0.loss_sum.item<double>());
  EXPECT_EQ(task.loss(Split::Valid, rows, 0.0).loss_sum.item<double>(), valid.loss_sum.item<double>());
}

TEST(MlmTask, NeedsTheTokenHeadOverTheVocabulary) {
  models::ModelConfig sequence = tiny_mlm_config();
  sequence.head = models::EncoderHead::Sequence;
  EXPECT_NE(error_of([&] { MlmTask(models::EncoderModel(sequence), chunks(30, 4), {}, masking()); })
                .find("model.head"),
            std::string::npos);
  models::ModelConfig two = tiny_mlm_config();
  two.num_labels = 2;
  EXPECT_NE(error_of([&] { MlmTask(models::EncoderModel(two), chunks(30, 4), {}, masking()); }).find("model.num_labels"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::train
