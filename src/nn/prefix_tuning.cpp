#include "strata/nn/prefix_tuning.h"

#include <torch/torch.h>

#include <algorithm>

namespace strata::nn {

namespace {
std::int64_t count(const std::vector<bool>& layers) { return std::count(layers.begin(), layers.end(), true); }
}  // namespace

at::Tensor prefix_groups(std::int64_t prefix_length, std::int64_t blocks) {
  return torch::arange(prefix_length, torch::kInt64).mul(blocks).div(prefix_length, "floor").to(torch::kInt32);
}

at::Tensor encoder_segments(const at::Tensor& padding, std::int64_t length, std::int64_t blocks) {
  const at::Tensor positions = torch::arange(length, torch::kInt64).unsqueeze(0);
  const at::Tensor real = padding.defined() ? padding.to(torch::kInt64).sum(1, /*keepdim=*/true).clamp_min(1)
                                            : torch::full({1, 1}, length, torch::kInt64);
  return positions.mul(blocks).div(real, "floor").clamp_max(blocks - 1).to(torch::kInt32).contiguous();
}

at::Tensor decoder_segments(std::int64_t batch, std::int64_t offset, std::int64_t length,
                            std::int64_t segment_length, std::int64_t blocks) {
  return torch::arange(offset, offset + length, torch::kInt64)
      .div(segment_length, "floor")
      .clamp_max(blocks - 1)
      .to(torch::kInt32)
      .unsqueeze(0)
      .repeat({batch, 1});
}

PrefixMlpImpl::PrefixMlpImpl(std::int64_t length, std::int64_t hidden, std::int64_t d_model, std::int64_t layers)
    : length_(length), d_model_(d_model), layers_(layers) {
  embedding = register_module("embedding", torch::nn::Embedding(length, d_model));
  fc1 = register_module("fc1", torch::nn::Linear(d_model, hidden));
  fc2 = register_module("fc2", torch::nn::Linear(hidden, 2 * layers * d_model));
}

at::Tensor PrefixMlpImpl::forward() {
  const at::Tensor states = fc2(torch::tanh(fc1(embedding->weight)));  // [P, 2 * layers * d]
  return states.view({length_, layers_, 2, d_model_}).permute({1, 2, 0, 3});
}

PrefixTuningImpl::PrefixTuningImpl(PrefixOptions options) : options_(std::move(options)) {
  const PrefixOptions& o = options_;
  auto family = [&](const char* name, const std::vector<bool>& layers) {
    return count(layers) == 0 ? PrefixMlp(nullptr)
                              : register_module(name, PrefixMlp(o.length, o.hidden, o.d_model, count(layers)));
  };
  encoder = family("encoder", o.encoder_layers);
  decoder = family("decoder", o.decoder_layers);
  cross = family("cross", o.decoder_layers);
}

PrefixStates PrefixTuningImpl::forward() {
  const PrefixOptions& o = options_;
  // [n, 2, P, d] -> one PrefixKv [1, H, P, Dh] per prefixed layer, in layer order.
  auto split = [&](PrefixMlp& mlp, const std::vector<bool>& layers, const at::Tensor& groups) {
    std::vector<std::optional<PrefixKv>> out(layers.size());
    if (!mlp) return out;
    const at::Tensor kv = mlp->forward().view({-1, 2, o.length, o.heads, o.d_model / o.heads}).transpose(2, 3);
    std::int64_t next = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (!layers[i]) continue;
      out[i] = PrefixKv{kv[next][0].unsqueeze(0), kv[next][1].unsqueeze(0), groups};
      ++next;
    }
    return out;
  };
  return {split(encoder, o.encoder_layers, o.encoder_groups), split(decoder, o.decoder_layers, o.decoder_groups),
          split(cross, o.decoder_layers, at::Tensor())};
}

}  // namespace strata::nn
