#include "strata/nn/kv_cache.h"

#include <torch/torch.h>

#include <algorithm>
#include <vector>

namespace strata::nn {

namespace {

// The row count of the cross keys and values; 0 where no layer has them.
std::int64_t cross_rows(const std::vector<LayerKvCache>& layers) {
  for (const LayerKvCache& layer : layers)
    if (layer.cross_k.defined()) return layer.cross_k.size(0);
  return 0;
}

// g where index is arange(n).repeat_interleave(g) (each row made g copies of itself), else 1.
std::int64_t copies_made(const std::vector<std::int64_t>& index) {
  if (index.empty()) return 1;
  const std::int64_t n = index.back() + 1;
  const std::int64_t size = static_cast<std::int64_t>(index.size());
  if (n <= 0 || size % n != 0) return 1;
  const std::int64_t g = size / n;
  for (std::int64_t r = 0; r < size; ++r)
    if (index[static_cast<std::size_t>(r)] != r / g) return 1;
  return g;
}

std::vector<std::int64_t> host_index(const at::Tensor& index) {
  const at::Tensor host = index.to(at::kCPU, at::kLong).contiguous();
  const std::int64_t* data = host.data_ptr<std::int64_t>();
  return {data, data + host.numel()};
}

}  // namespace

at::Tensor append_positions(PositionBuffer& buffer, const at::Tensor& cached, const at::Tensor& step) {
  // Under autograd a buffer written in place would change what an earlier step saved for its
  // backward.
  if (at::GradMode::is_enabled() && (step.requires_grad() || (cached.defined() && cached.requires_grad())))
    return cached.defined() ? torch::cat({cached, step}, 2) : step;
  at::Tensor& room = buffer.tensor;
  const std::int64_t held = cached.defined() ? cached.size(2) : 0, length = held + step.size(2);
  const bool fits = cached.defined() && room.defined() && cached.data_ptr() == room.data_ptr() &&
                    cached.strides() == room.strides() && room.size(2) >= length;
  if (!fits) {
    at::Tensor grown = at::empty({step.size(0), step.size(1), std::max<std::int64_t>(2 * length, 16), step.size(3)},
                                 step.options());
    if (held > 0) grown.narrow(2, 0, held).copy_(cached);
    room = grown;
  }
  room.narrow(2, held, step.size(2)).copy_(step);
  return room.narrow(2, 0, length);
}

bool KvCache::keeps_cross_rows(const at::Tensor& index) const {
  const std::int64_t rows = cross_rows(layers);
  if (cross_copies <= 1 || rows == 0 || index.numel() != rows) return false;
  const std::vector<std::int64_t> to = host_index(index);
  for (std::int64_t r = 0; r < rows; ++r)
    if (to[static_cast<std::size_t>(r)] / cross_copies != r / cross_copies) return false;
  return true;
}

bool KvCache::reorder(const at::Tensor& index) {
  auto keep = [&](at::Tensor& t) {
    if (t.defined()) t = t.index_select(0, index);
  };
  const bool cross_kept = keeps_cross_rows(index);
  for (LayerKvCache& layer : layers) {
    keep(layer.self_k);
    keep(layer.self_v);
    if (!cross_kept) {
      keep(layer.cross_k);
      keep(layer.cross_v);
    }
    keep(layer.context_k);
    keep(layer.context_v);
    keep(layer.ssm_state);
  }
  keep(key_padding);
  keep(segment);
  if (!cross_kept) cross_copies = cross_rows(layers) > 0 ? copies_made(host_index(index)) : 1;
  return cross_kept;
}

}  // namespace strata::nn
