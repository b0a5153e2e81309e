#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "strata/core/error.h"
#include "strata/train/adamw.h"

namespace strata::train {
namespace {

void set_grad(const at::Tensor& parameter, const at::Tensor& grad) {
  parameter.mutable_grad() = grad.clone();
}

TEST(AdamW, DecayRuleExemptsBiasesNormsAndVectors) {
  const at::Tensor matrix = torch::zeros({2, 2});
  const at::Tensor vector = torch::zeros({2});
  EXPECT_TRUE(decays("encoder.layers.0.fc1.weight", matrix));
  EXPECT_TRUE(decays("embed_tokens.weight", matrix));
  EXPECT_FALSE(decays("encoder.layers.0.fc1.bias", matrix));
  EXPECT_FALSE(decays("encoder.layer_norm.weight", matrix));
  EXPECT_FALSE(decays("encoder.LayerNorm.weight", matrix));
  EXPECT_FALSE(decays("final_norm.weight", matrix));
  EXPECT_FALSE(decays("prefix.scale", vector));
}

TEST(AdamW, MatchesAHandComputedUpdateForThreeSteps) {
  const double lr = 0.1, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.01;
  const at::Tensor w = torch::tensor({{1.0, -2.0}}, torch::kDouble).requires_grad_();
  AdamW optimizer({{"w", w}}, {beta1, beta2, eps, wd});

  const double grads[3][2] = {{0.5, -1.0}, {0.1, 0.2}, {-0.3, 0.4}};
  double p[2] = {1.0, -2.0}, m[2] = {0, 0}, v[2] = {0, 0};
  for (int t = 1; t <= 3; ++t) {
    set_grad(w, torch::tensor({{grads[t - 1][0], grads[t - 1][1]}}, torch::kDouble));
    optimizer.step(lr);
    for (int i = 0; i < 2; ++i) {
      const double g = grads[t - 1][i];
      p[i] -= lr * wd * p[i];
      m[i] = beta1 * m[i] + (1 - beta1) * g;
      v[i] = beta2 * v[i] + (1 - beta2) * g * g;
      const double m_hat = m[i] / (1 - std::pow(beta1, t));
      const double v_hat = v[i] / (1 - std::pow(beta2, t));
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
    EXPECT_NEAR(w[0][0].item<double>(), p[0], 1e-12) << "step " << t;
    EXPECT_NEAR(w[0][1].item<double>(), p[1], 1e-12) << "step " << t;
  }
  EXPECT_EQ(optimizer.step_count(), 3);
}

// fp32 parameters go through one parallel pass over all their elements (ranges that start and
// end inside parameters: two of them are larger than a range); the sums may round differently
// from libtorch's ops where a multiply and an add fuse.
TEST(AdamW, MatchesLibtorchAdamWOverFiveSteps) {
  torch::manual_seed(3);
  const std::vector<std::string> names = {"a.weight", "b.weight", "c.bias", "d.weight", "e.weight", "f.bias"};
  const std::vector<std::vector<int64_t>> shapes = {{4, 3}, {5}, {3}, {2, 2, 2}, {300, 100}, {50000}};
  NamedTensors ours;
  std::vector<at::Tensor> decayed, exempt;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const at::Tensor value = torch::randn(shapes[i]);
    ours.emplace_back(names[i], value.clone().requires_grad_());
    at::Tensor theirs = value.clone().requires_grad_();
    (decays(names[i], value) ? decayed : exempt).push_back(theirs);
  }
  ASSERT_EQ(decayed.size(), 3u);
  AdamW optimizer(ours);
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(0).weight_decay(0.01)));
  groups.emplace_back(exempt, std::make_unique<torch::optim::AdamWOptions>(
                                  torch::optim::AdamWOptions(0).weight_decay(0)));
  torch::optim::AdamW reference(groups);

  for (int step = 0; step < 5; ++step) {
    const double lr = 0.01 * (step + 1);
    for (auto& group : reference.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    std::size_t d = 0, e = 0;
    for (const auto& [name, parameter] : ours) {
      const at::Tensor grad = torch::randn(parameter.sizes());
      set_grad(parameter, grad);
      set_grad(decays(name, parameter) ? decayed[d++] : exempt[e++], grad);
    }
    optimizer.step(lr);
    reference.step();
  }
  std::size_t d = 0, e = 0;
  for (const auto& [name, parameter] : ours) {
    const at::Tensor& theirs = decays(name, parameter) ? decayed[d++] : exempt[e++];
    EXPECT_TRUE(torch::allclose(parameter, theirs, /*rtol=*/1e-6, /*atol=*/1e-7))
        << name << " differs by " << (parameter - theirs).abs().max().item<double>();
  }
}

TEST(AdamW, KeepsTrainableParametersOnceAndSkipsThoseWithoutGradient) {
  const at::Tensor shared = torch::ones({2, 2}).requires_grad_();
  const at::Tensor frozen = torch::ones({2, 2});
  const at::Tensor idle = torch::ones({2, 2}).requires_grad_();
  AdamW optimizer({{"embed.weight", shared}, {"frozen", frozen}, {"lm_head.weight", shared},
                   {"idle", idle}});
  EXPECT_EQ(optimizer.parameters().size(), 2u);
  const NamedTensors state = optimizer.state_tensors();
  ASSERT_EQ(state.size(), 4u);
  EXPECT_EQ(state[0].first, "exp_avg/embed.weight");
  EXPECT_EQ(state[1].first, "exp_avg_sq/embed.weight");
  EXPECT_EQ(state[2].first, "exp_avg/idle");

  set_grad(shared, torch::ones({2, 2}));
  optimizer.step(0.1);
  EXPECT_TRUE(torch::equal(idle, torch::ones({2, 2})));
  EXPECT_FALSE(torch::equal(shared, torch::ones({2, 2})));
  optimizer.zero_grad();
  EXPECT_FALSE(shared.grad().defined());
}

TEST(AdamW, LoadedStateContinuesIdentically) {
  torch::manual_seed(5);
  const at::Tensor start = torch::randn({3, 4});
  const at::Tensor a = start.clone().requires_grad_();
  const at::Tensor b = start.clone().requires_grad_();
  AdamW first({{"w", a}});
  for (int i = 0; i < 3; ++i) {
    set_grad(a, torch::randn({3, 4}));
    first.step(0.05);
  }
  {
    torch::NoGradGuard no_grad;
    b.copy_(a);
  }
  AdamW second({{"w", b}});
  std::map<std::string, at::Tensor> state;
  for (const auto& [name, tensor] : first.state_tensors()) state.emplace(name, tensor.clone());
  second.load_state(state, first.step_count());
  EXPECT_EQ(second.step_count(), 3);

  const at::Tensor grad = torch::randn({3, 4});
  set_grad(a, grad);
  set_grad(b, grad);
  first.step(0.05);
  second.step(0.05);
  EXPECT_TRUE(torch::equal(a, b));
}

TEST(AdamW, LoadStateRejectsMissingExtraAndMisshapenTensors) {
  const at::Tensor w = torch::zeros({2, 3}).requires_grad_();
  AdamW optimizer({{"w", w}});
  const std::map<std::string, at::Tensor> good = {{"exp_avg/w", torch::zeros({2, 3})},
                                                  {"exp_avg_sq/w", torch::zeros({2, 3})}};
  auto message = [&](std::map<std::string, at::Tensor> tensors) {
    try {
      optimizer.load_state(tensors, 1, "opt.safetensors");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto missing = good;
  missing.erase("exp_avg_sq/w");
  EXPECT_NE(message(missing).find("missing: exp_avg_sq/w"), std::string::npos) << message(missing);
  auto extra = good;
  extra.emplace("exp_avg/v", torch::zeros({1}));
  EXPECT_NE(message(extra).find("unexpected: exp_avg/v"), std::string::npos) << message(extra);
  auto misshapen = good;
  misshapen["exp_avg/w"] = torch::zeros({3, 2});
  const std::string shape_error = message(misshapen);
  EXPECT_NE(shape_error.find("opt.safetensors"), std::string::npos) << shape_error;
  EXPECT_NE(shape_error.find("[3, 2], expected [2, 3]"), std::string::npos) << shape_error;
  EXPECT_EQ(message(good), "no error");
}

TEST(ClipGradNorm, ScalesToTheLimitAndReportsTheNormBefore) {
  const at::Tensor a = torch::zeros({2}).requires_grad_();
  const at::Tensor b = torch::zeros({1}).requires_grad_();
  const at::Tensor no_grad = torch::zeros({1}).requires_grad_();
  set_grad(a, torch::tensor({3.0f, 0.0f}));
  set_grad(b, torch::tensor({4.0f}));
  EXPECT_NEAR(clip_grad_norm({a, b, no_grad}, 10.0), 5.0, 1e-6);
  EXPECT_TRUE(torch::equal(a.grad(), torch::tensor({3.0f, 0.0f})));
  EXPECT_NEAR(clip_grad_norm({a, b}, 1.0), 5.0, 1e-6);
  EXPECT_NEAR(a.grad()[0].item<float>(), 0.6f, 1e-5);
  EXPECT_NEAR(b.grad()[0].item<float>(), 0.8f, 1e-5);
}

TEST(ClipGradNorm, NonFiniteNormLeavesGradientsAlone) {
  const at::Tensor a = torch::zeros({2}).requires_grad_();
  set_grad(a, torch::tensor({std::numeric_limits<float>::infinity(), 1.0f}));
  EXPECT_FALSE(std::isfinite(clip_grad_norm({a}, 1.0)));
  EXPECT_EQ(a.grad()[1].item<float>(), 1.0f);
  set_grad(a, torch::tensor({std::nanf(""), 1.0f}));
  EXPECT_TRUE(std::isnan(clip_grad_norm({a}, 1.0)));
  EXPECT_EQ(a.grad()[1].item<float>(), 1.0f);
}

}  // namespace
}  // namespace strata::train
