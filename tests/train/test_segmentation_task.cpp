#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "strata/attn/spec.h"
#include "strata/core/error.h"
#include "strata/eval/boundary_scores.h"
#include "strata/train/segmentation_task.h"
#include "support/expect.h"

namespace strata::train {
namespace {

using test_support::error_of;

constexpr std::int32_t kSegmentationCls = 1, kSegmentationSep = 3;

models::ModelConfig tiny_segmentation_config() {
  models::ModelConfig c;
  c.architecture = "encoder";
  c.head = models::EncoderHead::Sequence;
  c.num_labels = 2;
  c.vocab_size = 30;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.max_positions = 32;
  c.dropout = 0.0;
  c.pad_id = 0;
  return c;
}

models::EncoderModel tiny_model(models::ModelConfig c = tiny_segmentation_config()) {
  torch::manual_seed(3);
  return models::EncoderModel(c);
}

// [CLS] left [SEP] right [SEP]: the left context in sentence 0 of section 0, the right one in
// sentence 1 of section 1 (of a root and one child), segments 0 and 1.
SegmentationExample example(const std::vector<std::int32_t>& left, const std::vector<std::int32_t>& right,
                            int label) {
  SegmentationExample e;
  Layout& l = e.layout;
  const auto push = [&](std::int32_t token, std::int32_t section, std::int32_t sentence, std::int32_t segment) {
    l.token.push_back(token);
    l.position.push_back(static_cast<std::int32_t>(l.position.size()));
    l.section.push_back(section);
    l.paragraph.push_back(sentence);
    l.sentence.push_back(sentence);
    l.segment.push_back(segment);
  };
  push(kSegmentationCls, 0, -1, 0);
  for (std::int32_t t : left) push(t, 0, 0, 0);
  push(kSegmentationSep, 0, -1, 0);
  for (std::int32_t t : right) push(t, 1, 1, 1);
  push(kSegmentationSep, 0, -1, 1);
  l.tree.parent = {-1, 0};
  l.tree.depth = {0, 1};
  l.tree.heading = {"", "S"};
  e.label = label;
  return e;
}

// Random contexts of 1-6 tokens; a boundary's right context starts with token 5, any other
// right context with 6: a rule the model can learn.
std::vector<SegmentationExample> toy_examples(int count, std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<SegmentationExample> out;
  for (int i = 0; i < count; ++i) {
    const auto random_tokens = [&](int n) {
      const at::Tensor t = torch::randint(7, 30, {n}, torch::kInt32);
      return std::vector<std::int32_t>(t.data_ptr<std::int32_t>(), t.data_ptr<std::int32_t>() + n);
    };
    const int label = i % 3 == 0;
    std::vector<std::int32_t> right = random_tokens(1 + (i + 2) % 6);
    right.insert(right.begin(), label ? 5 : 6);
    out.push_back(example(random_tokens(1 + i % 6), right, label));
  }
  return out;
}

// The logits of one example alone, unpadded.
at::Tensor logits_alone(models::EncoderModel& model, const SegmentationExample& e) {
  const at::Tensor ids = torch::tensor(std::vector<std::int64_t>(e.layout.token.begin(), e.layout.token.end()))
                             .view({1, -1});
  return model->forward(ids, torch::ones_like(ids, torch::kBool)).logits[0];
}

TEST(SegmentationTask, LossIsTheSummedCrossEntropyOfEachExamplesLogits) {
  models::EncoderModel model = tiny_model();
  SegmentationTask task(model, toy_examples(6, 1), {});  // shares the module with `model`
  const std::vector<std::size_t> rows{0, 3, 4, 5};  // of several lengths: padding must not matter
  const double smoothing = 0.1;
  const BatchLoss batch = task.loss(Split::Train, rows, smoothing);

  const std::vector<SegmentationExample> examples = toy_examples(6, 1);
  double expected = 0;
  std::int64_t tokens = 0;
  for (std::size_t r : rows) {
    const at::Tensor log_p = torch::log_softmax(logits_alone(model, examples[r]), -1);
    const double nll = -log_p[examples[r].label].item<double>();
    const double uniform = -log_p.mean().item<double>();
    expected += (1 - smoothing) * nll + smoothing * uniform;
    tokens += static_cast<std::int64_t>(examples[r].layout.size());
  }
  EXPECT_NEAR(batch.loss_sum.item<double>(), expected, 1e-4);
  EXPECT_EQ(batch.labels, 4);
  EXPECT_EQ(batch.tokens, tokens);
  EXPECT_EQ(task.costs(Split::Train)[3], examples[3].layout.size());
  EXPECT_TRUE(task.costs(Split::Valid).empty());
}

TEST(SegmentationTask, AFewStepsLowerTheLossOnAToySet) {
  SegmentationTask task(tiny_model(), toy_examples(24, 2), {});
  std::vector<std::size_t> rows(24);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  torch::optim::AdamW optimizer(task.model().parameters(), torch::optim::AdamWOptions(3e-3));
  const double first = task.loss(Split::Train, rows, 0.0).loss_sum.item<double>() / 24;
  for (int step = 0; step < 60; ++step) {
    optimizer.zero_grad();
    const BatchLoss batch = task.loss(Split::Train, rows, 0.0);
    (batch.loss_sum / batch.labels).backward();
    optimizer.step();
  }
  const double last = task.loss(Split::Train, rows, 0.0).loss_sum.item<double>() / 24;
  EXPECT_LT(last, 0.5 * first) << first << " -> " << last;
}

TEST(SegmentationTask, ProbabilitiesAreTheSoftmaxOfEachExampleAndMetricsScoreTheirArgmax) {
  models::EncoderModel model = tiny_model();
  const std::vector<SegmentationExample> valid = toy_examples(9, 4);
  model->train();
  const std::vector<float> p = boundary_probabilities(model, valid, /*max_tokens=*/24);
  EXPECT_TRUE(model->is_training());  // mode restored
  ASSERT_EQ(p.size(), valid.size());
  model->eval();
  for (std::size_t i = 0; i < valid.size(); ++i)
    EXPECT_NEAR(p[i], torch::softmax(logits_alone(model, valid[i]), -1)[1].item<float>(), 1e-5) << i;

  SegmentationTask task(model, {}, valid);
  std::vector<int> predicted, gold;
  for (std::size_t i = 0; i < 7; ++i) {
    predicted.push_back(p[i] > 0.5f);
    gold.push_back(valid[i].label);
  }
  const BoundaryScores expected = boundary_scores(predicted, gold);
  const std::map<std::string, double> metrics = task.extra_metrics(7);  // the first 7 candidates
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_DOUBLE_EQ(metrics.at("precision"), expected.precision);
  EXPECT_DOUBLE_EQ(metrics.at("recall"), expected.recall);
  EXPECT_DOUBLE_EQ(metrics.at("f1"), expected.f1);
  EXPECT_TRUE(task.extra_metrics(0).empty());
}

TEST(SegmentationTask, AnIntraContextMaskHidesTheRightContextFromCls) {
  // seed 003's intra-context pattern: each token sees only its own context (segment).
  models::ModelConfig c = tiny_segmentation_config();
  attn::LayerSpec spec;
  spec.heads[0].mask = attn::parse_mask("same_segment");
  c.encoder_attention = {spec};
  models::EncoderModel masked = tiny_model(c);
  const std::vector<SegmentationExample> a{example({8, 9}, {5, 10}, 1)}, b{example({8, 9}, {6, 11}, 0)};
  EXPECT_FLOAT_EQ(boundary_probabilities(masked, a)[0], boundary_probabilities(masked, b)[0]);
  models::EncoderModel plain = tiny_model();
  EXPECT_NE(boundary_probabilities(plain, a)[0], boundary_probabilities(plain, b)[0]);
}

TEST(SegmentationTask, AModelOfAnotherHeadOrTooFewPositionsIsAnError) {
  models::ModelConfig c = tiny_segmentation_config();
  c.head = models::EncoderHead::Marker;
  EXPECT_NE(error_of([&] { SegmentationTask(tiny_model(c), toy_examples(2, 1), {}); }).find("model.head"),
            std::string::npos);
  c = tiny_segmentation_config();
  c.max_positions = 8;
  const std::string message = error_of([&] { SegmentationTask(tiny_model(c), toy_examples(6, 1), {}); });
  EXPECT_NE(message.find("model.max_positions"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata::train
