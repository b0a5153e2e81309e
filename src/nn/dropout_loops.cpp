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

// element(e, factor) for e < count, chunk by chunk: the mask's draws for a chunk first, in a
// loop of their own, then `element` over it with each element's factor. `element` must be always
// inlined (STRATA_INLINE on the lambda), so that its loop is compiled for the caller's clone.
template <class Element>
STRATA_INLINE void masked_chunks(const MaskRule& mask, std::int64_t first, std::int64_t count, Element element) {
  std::int32_t draw[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = std::min(kChunk, count - c0);
    for (std::int64_t c = 0; c < m; ++c) draw[c] = attn::counter_draw_at(mask.row, first + c0 + c);
    for (std::int64_t c = 0; c < m; ++c) element(c0 + c, draw[c] >= mask.first_kept ? mask.kept : 0.0f);
  }
}

// erf(u) by Abramowitz and Stegun 7.1.26 (absolute error <= 1.5e-7), the form libtorch's
// vectorised GELU uses too, given exp(-u²) (the gradient has it already).
STRATA_INLINE float erf_as(float u, float exp_minus_u2) {
  const float z = std::fabs(u);
  const float t = 1.0f / (1.0f + 0.3275911f * z);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float magnitude = 1.0f - poly * exp_minus_u2;
  return u < 0 ? -magnitude : magnitude;
}

}  // namespace

STRATA_VECTOR_CLONES
void scale_kept(const float* in, float* out, std::int64_t first, std::int64_t count, MaskRule mask) {
  masked_chunks(mask, first, count, [&](std::int64_t e, float factor) STRATA_INLINE_LAMBDA { out[e] = in[e] * factor; });
}

STRATA_VECTOR_CLONES
void gelu_kept(const float* x, float* out, std::int64_t first, std::int64_t count, MaskRule mask) {
  masked_chunks(mask, first, count, [&](std::int64_t e, float factor) STRATA_INLINE_LAMBDA {
    const float v = x[e];
    out[e] = 0.5f * v * (1.0f + erf_as(v * 0.70710678f, exp_poly(-0.5f * v * v))) * factor;
  });
}

// gelu'(x) = Phi(x) + x phi(x).
STRATA_VECTOR_CLONES
void gelu_kept_grad(const float* x, const float* dy, float* dx, std::int64_t first, std::int64_t count,
                    MaskRule mask) {
  masked_chunks(mask, first, count, [&](std::int64_t e, float factor) STRATA_INLINE_LAMBDA {
    const float v = x[e];
    const float gauss = exp_poly(-0.5f * v * v);  // exp(-(v / sqrt 2)²), erf's and phi's
    const float slope = 0.5f * (1.0f + erf_as(v * 0.70710678f, gauss)) + v * 0.39894228f * gauss;
    dx[e] = dy[e] * slope * factor;
  });
}

}  // namespace strata::nn
