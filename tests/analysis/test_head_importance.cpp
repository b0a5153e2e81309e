// Head importance (seed 003 §3.1.1, §4.2.1) on a tiny token-classifying encoder in double
// precision: the Taylor score is the derivative of the mean loss along the head's own
// parameters, the head-mask score the derivative along its gate; both checked against central
// differences, and their batching, normalisation, limits and clean-up.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "strata/analysis/head_importance.h"
#include "strata/core/error.h"
#include "strata/models/encoder_model.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/train/task.h"

namespace strata::analysis {
namespace {

// Token classification over fixed random sequences; examples of 3 to 7 tokens.
class ToyTask : public train::TrainTask {
 public:
  explicit ToyTask(std::size_t examples = 6) : model_(seeded_model()) {
    for (std::size_t e = 0; e < examples; ++e) {
      const std::int64_t length = 3 + static_cast<std::int64_t>(e % 5);
      ids_.push_back(torch::randint(3, 24, {length}, torch::kLong));
      labels_.push_back(torch::randint(0, 3, {length}, torch::kLong));
      costs_.push_back(static_cast<std::size_t>(length));
    }
  }
  static models::EncoderModel seeded_model() {
    torch::manual_seed(5);
    models::EncoderModel model(config());
    model->to(torch::kDouble);
    return model;
  }
  static models::ModelConfig config() {
    models::ModelConfig c;
    c.architecture = "encoder";
    c.head = models::EncoderHead::Token;
    c.num_labels = 3;
    c.vocab_size = 24;
    c.d_model = 12;
    c.heads = 3;
    c.d_ff = 24;
    c.encoder_layers = 2;
    c.max_positions = 16;
    c.dropout = 0.1;  // off during the analysis (eval mode), or the checks below would not hold
    c.attention_kernel = "reference";
    return c;
  }
  torch::nn::Module& model() override { return *model_; }
  const std::vector<std::size_t>& costs(train::Split split) const override {
    return split == train::Split::Valid ? costs_ : empty_;
  }
  train::BatchLoss loss(train::Split, std::span<const std::size_t> rows, double label_smoothing) override {
    std::int64_t longest = 0, labels = 0;
    for (const std::size_t r : rows) longest = std::max(longest, ids_[r].size(0));
    const auto batch = static_cast<std::int64_t>(rows.size());
    at::Tensor ids = torch::zeros({batch, longest}, torch::kLong);
    at::Tensor padding = torch::zeros({batch, longest}, torch::kBool);
    at::Tensor targets = torch::full({batch, longest}, -100, torch::kLong);
    for (std::int64_t b = 0; b < batch; ++b) {
      const std::int64_t n = ids_[rows[b]].size(0);
      ids[b].narrow(0, 0, n).copy_(ids_[rows[b]]);
      padding[b].narrow(0, 0, n).fill_(true);
      targets[b].narrow(0, 0, n).copy_(labels_[rows[b]]);
      labels += n;
    }
    const at::Tensor logits = model_->forward(ids, padding).logits;
    return {train::token_loss_sum(logits, targets, label_smoothing), labels, labels};
  }

  // The mean loss over the first `examples` examples in one batch, without gradients.
  double mean_loss(std::size_t examples) {
    torch::NoGradGuard no_grad;
    model_->eval();
    std::vector<std::size_t> rows(examples);
    for (std::size_t i = 0; i < examples; ++i) rows[i] = i;
    const train::BatchLoss l = loss(train::Split::Valid, rows, 0.0);
    return l.loss_sum.item<double>() / static_cast<double>(l.labels);
  }

  models::EncoderModel model_;
  std::vector<at::Tensor> ids_, labels_;
  std::vector<std::size_t> costs_, empty_;
};

// Scales head h's parameters of `a` (q/k/v rows, out_proj columns) by `factor`, in place.
void scale_head(nn::MultiHeadAttentionImpl& a, std::int64_t h, double factor) {
  torch::NoGradGuard no_grad;
  const std::int64_t dh = a.q_proj->weight.size(0) / a.heads();
  for (nn::AdaptableLinear* linear : {&a.q_proj, &a.k_proj, &a.v_proj}) {
    (*linear)->weight.narrow(0, h * dh, dh).mul_(factor);
    (*linear)->bias.narrow(0, h * dh, dh).mul_(factor);
  }
  a.out_proj->weight.narrow(1, h * dh, dh).mul_(factor);
}

ImportanceOptions raw(ImportanceMethod method, std::size_t max_tokens = 1000) {
  ImportanceOptions o;
  o.method = method;
  o.normalize = ImportanceNormalization::None;
  o.max_tokens = max_tokens;
  return o;
}

TEST(HeadImportance, NamesEveryAttentionModuleAsALayer) {
  ToyTask task;
  const HeadImportance result = head_importance(task, raw(ImportanceMethod::Taylor));
  EXPECT_EQ(result.layers, (std::vector<std::string>{"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"}));
  ASSERT_EQ(result.scores.size(), 2u);
  EXPECT_EQ(result.scores[0].size(), 3u);
  EXPECT_EQ(result.examples, 6);
  EXPECT_EQ(result.labels, 3 + 4 + 5 + 6 + 7 + 3);
}

TEST(HeadImportance, TaylorIsTheLossDerivativeAlongTheHeadsParameters) {
  ToyTask task;
  const HeadImportance result = head_importance(task, raw(ImportanceMethod::Taylor));
  const std::vector<NamedAttention> layers = attention_modules(task.model());
  // d/dt L(θ with θ_h → t θ_h) at t = 1 is Σ ∇L ⊙ θ_h.
  constexpr double eps = 1e-5;
  for (std::size_t l = 0; l < 2; ++l)
    for (std::int64_t h = 0; h < 3; ++h) {
      nn::MultiHeadAttentionImpl& a = *layers[l].module;
      scale_head(a, h, 1 + eps);
      const double up = task.mean_loss(6);
      scale_head(a, h, (1 - eps) / (1 + eps));
      const double down = task.mean_loss(6);
      scale_head(a, h, 1 / (1 - eps));
      const double derivative = std::abs((up - down) / (2 * eps));
      EXPECT_NEAR(result.scores[l][h], derivative, 1e-6 + 1e-4 * derivative) << l << " " << h;
      EXPECT_GT(result.scores[l][h], 0.0);
    }
}

TEST(HeadImportance, TaylorDoesNotDependOnBatching) {
  ToyTask task;
  const HeadImportance one = head_importance(task, raw(ImportanceMethod::Taylor, 1000));
  const HeadImportance each = head_importance(task, raw(ImportanceMethod::Taylor, 1));
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t h = 0; h < 3; ++h) EXPECT_NEAR(one.scores[l][h], each.scores[l][h], 1e-12);
}

TEST(HeadImportance, AHeadWithoutParametersScoresZero) {
  ToyTask task;
  nn::MultiHeadAttentionImpl& a = *attention_modules(task.model())[0].module;
  scale_head(a, 1, 0.0);
  const HeadImportance result = head_importance(task, raw(ImportanceMethod::Taylor));
  EXPECT_EQ(result.scores[0][1], 0.0);
  EXPECT_GT(result.scores[0][0], 0.0);
}

TEST(HeadImportance, HeadMaskIsTheLossDerivativeAlongTheGate) {
  ToyTask task;
  const HeadImportance result = head_importance(task, raw(ImportanceMethod::HeadMask));
  const std::vector<NamedAttention> layers = attention_modules(task.model());
  constexpr double eps = 1e-5;
  for (std::size_t l = 0; l < 2; ++l)
    for (std::int64_t h = 0; h < 3; ++h) {
      auto loss_with_gate = [&](double value) {
        at::Tensor gate = torch::ones({3}, torch::kDouble);
        gate[h] = value;
        layers[l].module->set_head_gate(gate);
        const double loss = task.mean_loss(6);
        layers[l].module->set_head_gate(at::Tensor());
        return loss;
      };
      // One batch: Σ |∂L_batch/∂g| / labels is |∂ mean loss / ∂g|.
      const double derivative = std::abs((loss_with_gate(1 + eps) - loss_with_gate(1 - eps)) / (2 * eps));
      EXPECT_NEAR(result.scores[l][h], derivative, 1e-6 + 1e-4 * derivative) << l << " " << h;
    }
  // Per-batch absolute values add up to at least the absolute value of the whole.
  const HeadImportance each = head_importance(task, raw(ImportanceMethod::HeadMask, 1));
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t h = 0; h < 3; ++h) EXPECT_GE(each.scores[l][h], result.scores[l][h] - 1e-12);
}

TEST(HeadImportance, LayerNormalisationDividesEachRowByItsNorm) {
  ToyTask task;
  const HeadImportance plain = head_importance(task, raw(ImportanceMethod::HeadMask));
  ImportanceOptions options = raw(ImportanceMethod::HeadMask);
  options.normalize = ImportanceNormalization::Layer;
  const HeadImportance normalised = head_importance(task, options);
  for (std::size_t l = 0; l < 2; ++l) {
    double norm = 0, plain_norm = 0;
    for (std::size_t h = 0; h < 3; ++h) {
      norm += normalised.scores[l][h] * normalised.scores[l][h];
      plain_norm += plain.scores[l][h] * plain.scores[l][h];
    }
    EXPECT_NEAR(norm, 1.0, 1e-12);
    for (std::size_t h = 0; h < 3; ++h)
      EXPECT_NEAR(normalised.scores[l][h], plain.scores[l][h] / std::sqrt(plain_norm), 1e-12);
  }
}

TEST(HeadImportance, LeavesTheModelAsItFoundIt) {
  ToyTask task;
  task.model_->train();
  const at::Tensor ids = torch::randint(3, 24, {1, 5}, torch::kLong);
  task.model_->eval();
  const at::Tensor before = task.model_->forward(ids, at::Tensor()).logits.detach();
  task.model_->train();
  for (const ImportanceMethod method : {ImportanceMethod::Taylor, ImportanceMethod::HeadMask})
    head_importance(task, raw(method));
  EXPECT_TRUE(task.model_->is_training());
  for (const auto& p : task.model_->parameters()) EXPECT_FALSE(p.grad().defined());
  task.model_->eval();
  EXPECT_TRUE(torch::equal(task.model_->forward(ids, at::Tensor()).logits.detach(), before));  // no gate left
}

TEST(HeadImportance, MaxExamplesAndJson) {
  ToyTask task;
  ImportanceOptions options = raw(ImportanceMethod::Taylor);
  options.max_examples = 2;
  const HeadImportance result = head_importance(task, options);
  EXPECT_EQ(result.examples, 2);
  EXPECT_EQ(result.labels, 3 + 4);
  const nlohmann::ordered_json json = to_json(result);
  EXPECT_EQ(json["method"], "taylor");
  EXPECT_EQ(json["normalize"], "none");
  EXPECT_EQ(json["examples"], 2);
  EXPECT_EQ(json["heads"], nlohmann::ordered_json({3, 3}));
  ASSERT_EQ(json["scores"].size(), 2u);
  EXPECT_EQ(json["scores"][1][2].get<double>(), result.scores[1][2]);
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& row = result.scores[l];
    const auto best = std::max_element(row.begin(), row.end()) - row.begin();
    EXPECT_EQ(json["top_head_per_layer"][l], best);
  }
}

TEST(HeadImportance, ErrorsAndNames) {
  ToyTask empty(0);
  EXPECT_THROW(head_importance(empty, raw(ImportanceMethod::Taylor)), Error);
  // Taylor needs the heads' parameter gradients; the gates of head_mask do not.
  ToyTask frozen;
  for (auto& p : frozen.model_->parameters()) p.requires_grad_(false);
  EXPECT_THROW(head_importance(frozen, raw(ImportanceMethod::Taylor)), Error);
  EXPECT_GT(head_importance(frozen, raw(ImportanceMethod::HeadMask)).scores[0][0], 0.0);
  EXPECT_EQ(importance_method_from_name("head_mask"), ImportanceMethod::HeadMask);
  EXPECT_EQ(normalization_from_name("none"), ImportanceNormalization::None);
  EXPECT_THROW(importance_method_from_name("fisher"), Error);
  EXPECT_THROW(normalization_from_name("global"), Error);
}

TEST(TopHeads, LargestFirstTiesInOrder) {
  const HeadMatrix m = {{0.1, 0.5}, {0.5, 0.2, 0.9}};
  const std::vector<RankedHead> top = top_heads(m, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].layer, 1u);
  EXPECT_EQ(top[0].head, 2);
  EXPECT_EQ(top[1].layer, 0u);
  EXPECT_EQ(top[1].head, 1);
  EXPECT_EQ(top[2].layer, 1u);
  EXPECT_EQ(top[2].head, 0);
  EXPECT_EQ(top_heads(m, 10).size(), 5u);
}

}  // namespace
}  // namespace strata::analysis
