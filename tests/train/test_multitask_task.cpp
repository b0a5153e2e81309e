#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/train/multitask_task.h"

namespace strata::train {
namespace {

models::ModelConfig tiny_config(const std::string& tasks) {
  models::ModelConfig c;
  c.architecture = "ca_mtl";
  c.vocab_size = 30;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.max_positions = 8;  // N = 2 blocks of 4
  c.dropout = 0.0;
  c.pad_id = 2;
  c.tasks = tasks;
  return c;
}

SuiteTask classification(const std::string& name, std::size_t classes) {
  SuiteTask t;
  t.name = name;
  t.metric = "accuracy";
  for (std::size_t c = 0; c < classes; ++c) t.labels.push_back("c" + std::to_string(c));
  return t;
}

SuiteTask regression(const std::string& name) {
  SuiteTask t;
  t.name = name;
  t.regression = true;
  t.metric = "pearson";
  return t;
}

// n examples of `task`: [CLS]=0, two tokens that give the label away, [SEP]=1.
std::vector<MultitaskExample> examples(std::size_t task, std::size_t n, bool regression, std::size_t classes = 2) {
  std::vector<MultitaskExample> out;
  for (std::size_t i = 0; i < n; ++i) {
    MultitaskExample e;
    e.task = task;
    const auto label = static_cast<std::int64_t>(i % (regression ? 2 : classes));
    e.ids = {0, static_cast<std::int32_t>(5 + label), static_cast<std::int32_t>(10 + i % 7), 1};
    e.label = regression ? -1 : label;
    e.value = regression ? 0.25 + 0.5 * static_cast<double>(label) : 0;
    out.push_back(e);
  }
  return out;
}

struct Suite {
  std::vector<SuiteTask> tasks;
  std::vector<MultitaskExample> train, valid;
};

Suite two_tasks() {
  Suite s;
  s.tasks = {classification("big", 3), regression("rating")};
  s.train = examples(0, 12, false, 3);
  for (const MultitaskExample& e : examples(1, 5, true)) s.train.push_back(e);
  s.valid = s.train;
  return s;
}

MultitaskTask make(const Suite& s, TaskSampler sampler, std::size_t batch = 4) {
  torch::manual_seed(1);
  MultitaskOptions options;
  options.sampler = sampler;
  options.batch_size = batch;
  options.seed = 9;
  return MultitaskTask(models::CaMtlModel(tiny_config("big:3,rating:1")), s.tasks, s.train, s.valid, options);
}

TEST(MultitaskTask, LossIsTheMeanOverTasksOfEachTasksMeanLoss) {
  const Suite s = two_tasks();
  MultitaskTask task = make(s, TaskSampler::Uniform);
  auto& model = dynamic_cast<models::CaMtlModelImpl&>(task.model());
  model.eval();
  // Rows 0-2 are task "big" (classes 0, 1, 2), row 12 is the regression (target 0.25).
  const std::vector<std::size_t> rows{0, 1, 2, 12};
  const BatchLoss batch = task.loss(Split::Train, rows, 0.0);
  EXPECT_EQ(batch.labels, 1);

  at::Tensor ids = torch::full({4, 8}, 2, torch::kInt64);
  at::Tensor padding = torch::zeros({4, 8}, torch::kBool);
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::size_t i = 0; i < 4; ++i) {
      ids[r][static_cast<std::int64_t>(i)] = s.train[rows[static_cast<std::size_t>(r)]].ids[i];
      padding[r][static_cast<std::int64_t>(i)] = true;
    }
  const at::Tensor pooled = model.pooled(ids, padding, torch::tensor({0, 0, 0, 1}));
  const at::Tensor logits = model.head(0, pooled.narrow(0, 0, 3));
  const at::Tensor log_p = torch::log_softmax(logits, -1);
  const double big = -(log_p[0][0] + log_p[1][1] + log_p[2][2]).item<double>() / 3;
  const double value = model.head(1, pooled.narrow(0, 3, 1))[0].item<double>();
  const double score = (value - 0.25) * (value - 0.25);
  EXPECT_NEAR(batch.loss_sum.item<double>(), (big + score) / 2, 1e-5);

  const BatchLoss valid = task.loss(Split::Valid, rows, 0.0);
  EXPECT_EQ(valid.labels, 4);
  EXPECT_NEAR(valid.loss_sum.item<double>(), 3 * big + score, 1e-4);
}

TEST(MultitaskTask, UncertaintySamplingHandlesARegressionTaskWithoutNaN) {
  const Suite s = two_tasks();
  for (const TaskSampler sampler : {TaskSampler::MtUncertainty, TaskSampler::MtUncertaintyWeighted}) {
    MultitaskTask task = make(s, sampler);
    task.model().train();
    for (int step = 0; step < 6; ++step) {
      const std::vector<std::size_t> rows = task.next_batch();
      ASSERT_EQ(rows.size(), 4u);
      EXPECT_TRUE(std::isfinite(task.loss(Split::Train, rows, 0.0).loss_sum.item<double>()));
    }
    // A regression head predicting the middle of the targets' range [0.25, 0.75] is read as
    // p = 0.5, the most uncertain two-class distribution (normalised entropy 1): a
    // classifier's is below its maximum, so the regression candidates are the ones chosen.
    auto& model = dynamic_cast<models::CaMtlModelImpl&>(task.model());
    {
      torch::NoGradGuard no_grad;
      auto& head = *model.task_head(1);
      head.weight.zero_();
      head.bias.fill_(0.5);
    }
    for (const std::size_t r : task.next_batch()) EXPECT_GE(r, 12u) << task_sampler_name(sampler);
  }
}

TEST(MultitaskTask, TaskSamplersDrawWholeBatchesOfOneTask) {
  const Suite s = two_tasks();
  MultitaskTask task = make(s, TaskSampler::Uniform, 3);
  EXPECT_EQ(task.batches_per_epoch(), 2u * 4u);  // T · ⌈12 / 3⌉
  for (int step = 0; step < 10; ++step) {
    const std::vector<std::size_t> rows = task.next_batch();
    ASSERT_EQ(rows.size(), 3u);
    for (const std::size_t r : rows) EXPECT_EQ(r >= 12, rows[0] >= 12);
  }
}

TEST(MultitaskTask, SamplerStateResumesTheSameDraws) {
  const Suite s = two_tasks();
  MultitaskTask first = make(s, TaskSampler::SizeProportional);
  for (int step = 0; step < 3; ++step) first.next_batch();
  const nlohmann::json state = nlohmann::json::parse(first.sampler_state().dump());
  MultitaskTask resumed = make(s, TaskSampler::SizeProportional);
  resumed.restore_sampler_state(state);
  for (int step = 0; step < 5; ++step) EXPECT_EQ(first.next_batch(), resumed.next_batch());
  EXPECT_EQ(first.extra_metrics(100).at("data_used"), resumed.extra_metrics(100).at("data_used"));
  nlohmann::json wrong = state;
  wrong["seen"] = "01";
  EXPECT_THROW(resumed.restore_sampler_state(wrong), Error);
}

TEST(MultitaskTask, MetricsPerTaskTheirMeanAndTheShares) {
  const Suite s = two_tasks();
  MultitaskTask task = make(s, TaskSampler::Uniform);
  task.next_batch();
  task.model().eval();
  torch::NoGradGuard no_grad;
  const auto metrics = task.extra_metrics(100);
  for (const char* name : {"task/big", "task/rating", "score", "data_used", "share/big", "share/rating"})
    EXPECT_TRUE(metrics.contains(name)) << name;
  EXPECT_NEAR(metrics.at("score"), (metrics.at("task/big") + metrics.at("task/rating")) / 2, 1e-12);
  EXPECT_NEAR(metrics.at("share/big") + metrics.at("share/rating"), 1.0, 1e-12);
  EXPECT_NEAR(metrics.at("data_used"), 4.0 / 17.0, 1e-12);
}

TEST(MultitaskTask, RejectsAModelOfOtherTasks) {
  const Suite s = two_tasks();
  EXPECT_THROW(MultitaskTask(models::CaMtlModel(tiny_config("big:3")), s.tasks, s.train, s.valid, {}), Error);
}

}  // namespace
}  // namespace strata::train
