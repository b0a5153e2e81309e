#include "adamw_update.h"

#include <cmath>

#include "strata/core/vector_clones.h"

namespace strata::train {

STRATA_VECTOR_CLONES
void adamw_update(float* p, const float* g, float* m, float* v, std::int64_t count, AdamWScalars s, float decay) {
  for (std::int64_t i = 0; i < count; ++i) {
    const float m_i = m[i] * s.beta1 + s.gain1 * g[i];
    const float v_i = v[i] * s.beta2 + s.gain2 * g[i] * g[i];
    m[i] = m_i;
    v[i] = v_i;
    p[i] = p[i] * decay + s.step * m_i / (std::sqrt(v_i) / s.root_bc2 + s.eps);
  }
}

}  // namespace strata::train
