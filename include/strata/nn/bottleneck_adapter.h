#pragma once
// The bottleneck adapter (Houlsby et al. 2019): a serial block on a sublayer's output y,
// before the residual add,
//   y + up(act(down(y))),   down: d -> size, up: size -> d,
// with `up` at zero, so a model given adapters starts as its base. nn::AdaptableLinear runs
// it on its output; nn/adapters.h places it (by default after each attention's out_proj and
// each feed-forward's fc2, as in the paper).
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <string>
#include <vector>

#include "strata/nn/zero_init_linear.h"

namespace strata::nn {

// One adapter's shape.
struct BottleneckSettings {
  std::int64_t size = 64;           // the bottleneck's width
  std::string activation = "relu";  // "relu" or "gelu"

  bool operator==(const BottleneckSettings&) const = default;

  // strata::Error naming the field for size <= 0 or an unknown activation.
  void check() const;
};

// add_bottleneck's options: the settings, and after which linear maps the adapters go (globs
// over the modules' full names). "*_attn.out_proj" names self_attn and encoder_attn, not the
// attention inside a PAL (pal.attn), which is an adapter already.
struct BottleneckOptions {
  BottleneckSettings settings{};
  std::vector<std::string> targets = {"*_attn.out_proj", "*.fc2"};
};

class BottleneckAdapterImpl : public torch::nn::Module {
 public:
  // features: d, the width of the output it adapts. `down` is drawn as torch's Linear draws.
  BottleneckAdapterImpl(std::int64_t features, const BottleneckSettings& settings);
  // y [.., d] -> y + up(act(down(y))).
  at::Tensor forward(const at::Tensor& y);

  const BottleneckSettings& settings() const { return settings_; }

  torch::nn::Linear down{nullptr};
  ZeroInitLinear up{nullptr};

 private:
  BottleneckSettings settings_;
};
TORCH_MODULE(BottleneckAdapter);

}  // namespace strata::nn
