#include "strata/train/gradient_reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/torch.h>

#include <chrono>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/train/process_group.h"

namespace strata::train {

struct GradientReducer::State {
  struct Bucket {
    std::vector<std::size_t> parameters;  // indices into `parameters`
    std::vector<std::int64_t> offsets;    // of each in `flat`; presences follow the gradients
    std::int64_t numel = 0;
    at::Tensor flat;
    std::size_t waiting = 0;  // parameters not done in this backward
    std::unique_ptr<PendingCollective> pending;
  };

  ProcessGroup& group;
  std::vector<at::Tensor> parameters;
  std::vector<std::size_t> bucket_of;
  std::vector<bool> done;
  std::vector<Bucket> buckets;
  std::size_t next_to_send = 0;
  bool armed = false;
  std::int64_t step = 0;
  // The accumulators keep the hooks; held here so that each parameter keeps the same one.
  std::vector<std::pair<std::shared_ptr<torch::autograd::Node>, std::uintptr_t>> hooks;

  State(ProcessGroup& g, std::vector<at::Tensor> p) : group(g), parameters(std::move(p)) {}

  void send(Bucket& bucket) {
    torch::NoGradGuard no_grad;
    float* presence = bucket.flat.data_ptr<float>() + bucket.numel;
    for (std::size_t k = 0; k < bucket.parameters.size(); ++k) {
      const at::Tensor& grad = parameters[bucket.parameters[k]].grad();
      at::Tensor slot = bucket.flat.slice(0, bucket.offsets[k], bucket.offsets[k] + parameters[bucket.parameters[k]].numel());
      if (grad.defined()) {
        slot.copy_(grad.reshape({-1}));
        presence[k] = 1.0f;
      } else {
        slot.zero_();
        presence[k] = 0.0f;
      }
    }
    bucket.pending = group.all_reduce_sum_async(
        bucket.flat, fmt::format("the gradient all-reduce of step {} (bucket {})", step, &bucket - buckets.data()));
  }

  // Sends, in order, every bucket whose parameters are all done.
  void send_ready() {
    while (next_to_send < buckets.size() && buckets[next_to_send].waiting == 0) send(buckets[next_to_send++]);
  }

  void on_gradient(std::size_t index) {
    if (!armed || done[index]) return;
    done[index] = true;
    if (--buckets[bucket_of[index]].waiting == 0) send_ready();
  }
};

GradientReducer::GradientReducer(ProcessGroup& group, std::vector<at::Tensor> parameters, std::int64_t bucket_bytes)
    : state_(std::make_unique<State>(group, std::move(parameters))) {
  State& s = *state_;
  s.bucket_of.resize(s.parameters.size());
  s.done.assign(s.parameters.size(), false);
  for (std::size_t i = s.parameters.size(); i-- > 0;) {
    const at::Tensor& p = s.parameters[i];
    if (p.scalar_type() != at::kFloat)
      throw Error(fmt::format("data-parallel training: parameter {} is {}, the gradient buckets hold float32 only", i,
                              c10::toString(p.scalar_type())));
    if (s.buckets.empty() || s.buckets.back().numel * 4 >= bucket_bytes) s.buckets.emplace_back();
    State::Bucket& bucket = s.buckets.back();
    bucket.parameters.push_back(i);
    bucket.offsets.push_back(bucket.numel);
    bucket.numel += p.numel();
    s.bucket_of[i] = s.buckets.size() - 1;
  }
  for (State::Bucket& bucket : s.buckets) {
    bucket.flat = torch::zeros({bucket.numel + static_cast<std::int64_t>(bucket.parameters.size())});
    bucket.waiting = bucket.parameters.size();
  }
  for (std::size_t i = 0; i < s.parameters.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(s.parameters[i]);
    const std::uintptr_t key = accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [&s, i](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          s.on_gradient(i);
          return outputs;
        }));
    s.hooks.emplace_back(std::move(accumulator), key);
  }
}

GradientReducer::~GradientReducer() {
  for (auto& [accumulator, key] : state_->hooks) accumulator->del_post_hook(key);
}

void GradientReducer::arm(std::int64_t step) {
  state_->armed = true;
  state_->step = step;
}

double GradientReducer::finish() {
  State& s = *state_;
  const auto start = std::chrono::steady_clock::now();
  // What backward did not send (a rank with no rows in the last micro-batch ran none): now.
  while (s.next_to_send < s.buckets.size()) s.send(s.buckets[s.next_to_send++]);
  torch::NoGradGuard no_grad;
  for (State::Bucket& bucket : s.buckets) {
    bucket.pending->wait();
    bucket.pending.reset();
    const float* presence = bucket.flat.data_ptr<float>() + bucket.numel;
    for (std::size_t k = 0; k < bucket.parameters.size(); ++k) {
      if (presence[k] == 0.0f) continue;  // no rank had a gradient for it
      at::Tensor& p = s.parameters[bucket.parameters[k]];
      const at::Tensor sum = bucket.flat.slice(0, bucket.offsets[k], bucket.offsets[k] + p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(sum);
      } else {
        p.mutable_grad() = sum.clone();
      }
    }
    bucket.waiting = bucket.parameters.size();
  }
  s.done.assign(s.parameters.size(), false);
  s.next_to_send = 0;
  s.armed = false;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::int64_t GradientReducer::bytes_per_step() const {
  std::int64_t bytes = 0;
  for (const State::Bucket& bucket : state_->buckets) bytes += bucket.flat.numel() * 4;
  return bytes;
}

std::size_t GradientReducer::buckets() const { return state_->buckets.size(); }

}  // namespace strata::train
