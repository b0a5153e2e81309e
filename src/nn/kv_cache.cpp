#include "strata/nn/kv_cache.h"

#include <torch/torch.h>

namespace strata::nn {

void KvCache::reorder(const at::Tensor& index) {
  auto keep = [&](at::Tensor& t) {
    if (t.defined()) t = t.index_select(0, index);
  };
  for (LayerKvCache& layer : layers) {
    keep(layer.self_k);
    keep(layer.self_v);
    keep(layer.cross_k);
    keep(layer.cross_v);
    keep(layer.context_k);
    keep(layer.context_v);
    keep(layer.ssm_state);
  }
  keep(key_padding);
  keep(segment);
}

}  // namespace strata::nn
