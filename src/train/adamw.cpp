#include "strata/train/adamw.h"

#include <torch/torch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <unordered_set>

#include "adamw_update.h"
#include "strata/attn/balanced_for.h"
#include "strata/nn/state_space.h"
#include "strata/train/checkpoint.h"

namespace strata::train {

bool decays(const std::string& name, const at::Tensor& parameter) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const bool bias = lower.ends_with("bias");
  const bool norm = lower.find("layer_norm") != std::string::npos ||
                    lower.find("layernorm") != std::string::npos ||
                    lower.find("_norm") != std::string::npos;
  // A state-space model's A and dt train without weight decay (thesis ch. 5, as S4 does).
  return !bias && !norm && parameter.dim() != 1 && !nn::is_state_space_dynamics(name);
}

AdamW::AdamW(const NamedTensors& parameters, AdamWOptions options) : options_(options) {
  std::unordered_set<const void*> seen;
  for (const auto& [name, parameter] : parameters) {
    if (!parameter.requires_grad() || !seen.insert(parameter.unsafeGetTensorImpl()).second)
      continue;
    slots_.push_back({name, parameter, at::zeros_like(parameter), at::zeros_like(parameter),
                      decays(name, parameter)});
  }
}

namespace {

bool fusable(const at::Tensor& parameter, const at::Tensor& grad) {
  return parameter.device().is_cpu() && parameter.scalar_type() == at::kFloat &&
         grad.scalar_type() == at::kFloat && grad.device().is_cpu() && parameter.is_contiguous();
}

}  // namespace

void AdamW::step(double lr) {
  torch::NoGradGuard no_grad;
  ++step_;
  const double bias_correction1 = 1 - std::pow(options_.beta1, static_cast<double>(step_));
  const double bias_correction2 = 1 - std::pow(options_.beta2, static_cast<double>(step_));
  const AdamWScalars scalars{static_cast<float>(options_.beta1), static_cast<float>(1 - options_.beta1),
                             static_cast<float>(options_.beta2), static_cast<float>(1 - options_.beta2),
                             static_cast<float>(std::sqrt(bias_correction2)), static_cast<float>(options_.eps),
                             static_cast<float>(-lr / bias_correction1)};

  // Every fp32 CPU parameter is updated in one parallel pass over all their elements (eight
  // per-tensor ops a parameter, each its own pass and its own fixed split between the threads,
  // were 1.3 % of a 2-thread training step's samples in bench_training); any other goes
  // through libtorch's ops.
  struct Part {
    float *p, *m, *v;
    const float* g;
    std::int64_t first;  // index of its first element in the joint range
    float decay;
  };
  std::vector<Part> parts;
  std::vector<at::Tensor> contiguous_grads;
  std::int64_t total = 0;
  for (Slot& slot : slots_) {
    const at::Tensor& grad = slot.parameter.grad();
    if (!grad.defined()) continue;
    if (!fusable(slot.parameter, grad)) {
      step_with_ops(slot, grad, lr, bias_correction1, bias_correction2);
      continue;
    }
    const at::Tensor& g = contiguous_grads.emplace_back(grad.contiguous());
    parts.push_back({slot.parameter.data_ptr<float>(), slot.exp_avg.data_ptr<float>(),
                     slot.exp_avg_sq.data_ptr<float>(), g.data_ptr<float>(), total,
                     static_cast<float>(decay_factor(slot, lr))});
    total += slot.parameter.numel();
  }
  attn::balanced_for(total, 1 << 14, [&](std::int64_t begin, std::int64_t end) {
    // The last part starting at or before `begin`, then on through the parts the range covers.
    auto part = std::upper_bound(parts.begin(), parts.end(), begin,
                                 [](std::int64_t at, const Part& part) { return at < part.first; }) - 1;
    for (; part != parts.end() && part->first < end; ++part) {
      const std::int64_t next = part + 1 == parts.end() ? total : (part + 1)->first;
      const std::int64_t from = std::max(begin, part->first) - part->first;
      const std::int64_t to = std::min(end, next) - part->first;
      adamw_update(part->p + from, part->g + from, part->m + from, part->v + from, to - from, scalars, part->decay);
    }
  });
}

double AdamW::decay_factor(const Slot& slot, double lr) const {
  return slot.decay && options_.weight_decay != 0 ? 1 - lr * options_.weight_decay : 1.0;
}

void AdamW::step_with_ops(Slot& slot, const at::Tensor& grad, double lr, double bias_correction1,
                          double bias_correction2) {
  const double decay = decay_factor(slot, lr);
  if (decay != 1.0) slot.parameter.mul_(decay);
  slot.exp_avg.mul_(options_.beta1).add_(grad, 1 - options_.beta1);
  slot.exp_avg_sq.mul_(options_.beta2).addcmul_(grad, grad, 1 - options_.beta2);
  const at::Tensor denom = (slot.exp_avg_sq.sqrt() / std::sqrt(bias_correction2)).add_(options_.eps);
  slot.parameter.addcdiv_(slot.exp_avg, denom, -lr / bias_correction1);
}

void AdamW::zero_grad() {
  for (Slot& slot : slots_) {
    at::Tensor& grad = slot.parameter.mutable_grad();
    if (grad.defined()) grad = at::Tensor();
  }
}

std::vector<at::Tensor> AdamW::parameters() const {
  std::vector<at::Tensor> result;
  for (const Slot& slot : slots_) result.push_back(slot.parameter);
  return result;
}

NamedTensors AdamW::state_tensors() const {
  NamedTensors result;
  for (const Slot& slot : slots_) {
    result.emplace_back("exp_avg/" + slot.name, slot.exp_avg);
    result.emplace_back("exp_avg_sq/" + slot.name, slot.exp_avg_sq);
  }
  return result;
}

void AdamW::load_state(const std::map<std::string, at::Tensor>& tensors, std::int64_t step,
                       const std::string& source) {
  const NamedTensors state = state_tensors();
  check_tensors_match(state, tensors, source);
  torch::NoGradGuard no_grad;
  for (const auto& [name, tensor] : state) tensor.copy_(tensors.at(name));
  step_ = step;
}

double clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> grads, norms;
  for (const at::Tensor& parameter : parameters)
    if (parameter.grad().defined()) {
      grads.push_back(parameter.grad());
      norms.push_back(parameter.grad().detach().norm(2).to(at::kDouble));
    }
  if (grads.empty()) return 0.0;
  const double total = torch::stack(norms).norm(2).item<double>();
  const double coefficient = max_norm / (total + 1e-6);
  if (std::isfinite(total) && coefficient < 1) {
    torch::NoGradGuard no_grad;
    for (at::Tensor& grad : grads) grad.mul_(coefficient);
  }
  return total;
}

}  // namespace strata::train
