#include "attention_alone.h"

#include <ATen/ops/randn.h>

namespace strata::bench {

std::shared_ptr<AttentionAlone> attention_alone(const attn::LayerSpec& spec, const attn::TokenLayout& tokens,
                                                std::int64_t length, std::int64_t heads, std::int64_t head_dim,
                                                std::int64_t prefix, const at::Tensor& groups) {
  auto a = std::make_shared<AttentionAlone>();
  a->q = at::randn({1, heads, length, head_dim}).requires_grad_(true);
  a->k = at::randn({1, heads, prefix + length, head_dim}).requires_grad_(true);
  a->v = at::randn({1, heads, prefix + length, head_dim}).requires_grad_(true);
  a->segment = groups;
  a->spec = spec;
  a->call.q = a->q;
  a->call.k = a->k;
  a->call.v = a->v;
  a->call.prefix_len = prefix;
  a->call.prefix_segment = groups;
  a->call.training = true;  // as in the models the benchmarks time
  a->call.seed = 99;
  if (!spec.is_plain()) {
    a->call.spec = &a->spec;
    a->call.query_layout = &tokens;
    a->call.key_layout = &tokens;
  }
  return a;
}

}  // namespace strata::bench
