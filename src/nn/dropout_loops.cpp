#include "dropout_loops.h"

#include <algorithm>
#include <cmath>

#include "strata/core/exp_poly.h"
#include "strata/core/vector_clones.h"

namespace strata::nn {

namespace {

// The element loops are vectorised in a copy for each instruction set
// (strata/core/vector_clones.h). They run in chunks of kChunk elements, the mask's draws (a
// 64-bit hash each) in a loop of their own, then the float arithmetic: AVX2 has no 64-bit
// multiply, so GCC leaves the hashing scalar there, and in one loop with it the GELU's erf and
// exp stayed scalar too (its AVX2 copy ran a float at a time: 16 % of a training step's
// samples on Zen 3).
constexpr std::int64_t kChunk = 64;

// The draws of elements [at, at + count), count <= kChunk.
STRATA_INLINE void draws(const MaskRule& mask, std::int64_t at, std::int64_t count, std::int32_t* draw) {
  for (std::int64_t c = 0; c < count; ++c) draw[c] = attn::counter_draw_at(mask.row, at + c);
}

STRATA_INLINE float factor(const MaskRule& mask, std::int32_t draw) { return draw >= mask.first_kept ? mask.kept : 0.0f; }

// erf(u) by Abramowitz and Stegun 7.1.26 (absolute error <= 1.5e-7), the form libtorch's
// vectorised GELU uses too.
STRATA_INLINE float erf_as(float u) {
  const float z = std::fabs(u);
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float magnitude = 1.0f - poly * exp_poly(-z * z);
  return u < 0 ? -magnitude : magnitude;
}

}  // namespace

STRATA_VECTOR_CLONES
void scale_kept(const float* in, float* out, std::int64_t first, std::int64_t count, MaskRule mask) {
  std::int32_t draw[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = std::min(kChunk, count - c0);
    draws(mask, first + c0, m, draw);
    for (std::int64_t c = 0; c < m; ++c) out[c0 + c] = in[c0 + c] * factor(mask, draw[c]);
  }
}

STRATA_VECTOR_CLONES
void gelu_kept(const float* x, float* out, std::int64_t first, std::int64_t count, MaskRule mask) {
  std::int32_t draw[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = std::min(kChunk, count - c0);
    draws(mask, first + c0, m, draw);
    for (std::int64_t c = 0; c < m; ++c) {
      const float v = x[c0 + c];
      out[c0 + c] = 0.5f * v * (1.0f + erf_as(v * 0.70710678f)) * factor(mask, draw[c]);
    }
  }
}

// gelu'(x) = Phi(x) + x phi(x).
STRATA_VECTOR_CLONES
void gelu_kept_grad(const float* x, const float* dy, float* dx, std::int64_t first, std::int64_t count,
                    MaskRule mask) {
  std::int32_t draw[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = std::min(kChunk, count - c0);
    draws(mask, first + c0, m, draw);
    for (std::int64_t c = 0; c < m; ++c) {
      const float v = x[c0 + c];
      const float slope =
          0.5f * (1.0f + erf_as(v * 0.70710678f)) + v * 0.39894228f * exp_poly(-0.5f * v * v);
      dx[c0 + c] = dy[c0 + c] * slope * factor(mask, draw[c]);
    }
  }
}

}  // namespace strata::nn
