#include "strata/nn/task_conditioning.h"

#include <torch/torch.h>

#include "strata/core/error.h"

namespace strata::nn {

FilmImpl::FilmImpl(std::int64_t condition_dim, std::int64_t features) : features_(features) {
  generator = register_module("generator", torch::nn::Linear(condition_dim, 2 * features));
  torch::NoGradGuard no_grad;
  generator->weight.zero_();
  generator->bias.zero_();
}

std::pair<at::Tensor, at::Tensor> FilmImpl::generate(const at::Tensor& z) {
  const auto parts = generator(z).chunk(2, -1);
  return {parts[0], parts[1]};
}

at::Tensor FilmImpl::forward(const at::Tensor& x, const at::Tensor& z) {
  auto [gamma, beta] = generate(z);
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape.front() = z.size(0);
  shape.back() = features_;
  return (1 + gamma.view(shape)) * x + beta.view(shape);
}

ConditionalAttentionBiasImpl::ConditionalAttentionBiasImpl(std::int64_t condition_dim, std::int64_t length,
                                                           std::int64_t blocks)
    : length_(length), blocks_(blocks) {
  if (length <= 0 || blocks <= 0 || blocks > length)
    throw Error("conditional attention: " + std::to_string(blocks) + " blocks over " + std::to_string(length) +
                " positions (need 1 <= blocks <= length)");
  block_ = (length + blocks - 1) / blocks;
  weight = register_parameter("weight", torch::zeros({length, block_}));
  film = register_module("film", Film(condition_dim, block_));
  // Row i belongs to block n = i / s, whose columns are n * s .. n * s + s - 1.
  const at::Tensor rows = torch::arange(length, torch::kInt64).div(block_, "floor") * block_;
  columns_ = rows.unsqueeze(1) + torch::arange(block_, torch::kInt64).unsqueeze(0);
}

at::Tensor ConditionalAttentionBiasImpl::forward(const at::Tensor& z) {
  const std::int64_t batch = z.size(0);
  const at::Tensor blocks = film(weight.unsqueeze(0), z);  // [B, L, s]
  // Scatter each row's s entries onto its block's columns of an [L, N * s] matrix, then crop
  // to L × L (the last block may be cut).
  const at::Tensor wide = torch::zeros({batch, length_, blocks_ * block_}, blocks.options())
                              .scatter(2, columns_.unsqueeze(0).expand({batch, -1, -1}), blocks);
  return wide.narrow(2, 0, length_).unsqueeze(1);
}

ConditionalLayerNormImpl::ConditionalLayerNormImpl(std::int64_t condition_dim, std::int64_t d) {
  film = register_module("film", Film(condition_dim, d));
}

at::Tensor ConditionalLayerNormImpl::forward(const at::Tensor& norm_weight, const at::Tensor& z) {
  return film(norm_weight.view({1, 1, -1}).expand({z.size(0), 1, -1}), z);
}

ConditionalBottleneckImpl::ConditionalBottleneckImpl(std::int64_t condition_dim, std::int64_t d) {
  film = register_module("film", Film(condition_dim, d));
  down = register_module("down", torch::nn::Linear(d, d / 3));
  up = register_module("up", torch::nn::Linear(d / 3, d));
}

at::Tensor ConditionalBottleneckImpl::forward(const at::Tensor& h, const at::Tensor& z) {
  return up(down(film(h, z)));
}

}  // namespace strata::nn
