#pragma once
// e^x in float arithmetic a loop vectorises, for the element loops built with
// STRATA_VECTOR_CLONES (the fused attention kernel's softmax, GELU's erf and its gradient).
#include <cstdint>

#include "strata/core/vector_clones.h"

namespace strata {

// Cephes expf: exp(x) = 2^k * exp(r), k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]
// (ln 2 split in two for an exact reduction), exp(r) by a degree-7 polynomial, 2^k built in
// the exponent bits. Branch-free, so the loop vectorises. 0 below log(FLT_MIN) (and for -inf).
STRATA_INLINE float exp_poly(float x) {
  constexpr float kMin = -87.33654f;  // log(FLT_MIN): below this the result would be denormal
  constexpr float kMax = 88.0f;       // keeps k <= 127 (exp saturates at e^88 ~ 1.7e38)
  const float low = x < kMin ? kMin : x;
  const float xc = low > kMax ? kMax : low;
  // Round to nearest by the 1.5 * 2^23 trick: exact for |t| < 2^22, no call to round().
  const float t = xc * 1.44269504088896341f;
  const float kf = (t + 12582912.0f) - 12582912.0f;
  float r = xc - kf * 0.693359375f;
  r = r - kf * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  const std::int32_t k = static_cast<std::int32_t>(kf);
  // k lies in [-126, 127] after the clamp, so 2^k is a normal float. The product is taken
  // before the select: a product on one side only would be a speculated FP operation, which
  // GCC will not turn into a vector blend unless the file is built without trapping math.
  const float e = y * __builtin_bit_cast(float, (k + 127) << 23);
  return x < kMin ? 0.0f : e;
}

}  // namespace strata
