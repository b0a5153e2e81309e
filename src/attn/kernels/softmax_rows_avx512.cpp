#include "softmax_rows.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <limits>

#define STRATA_AVX512 __attribute__((target("avx512f")))

namespace strata::attn::tiles {

namespace {

// The lanes [0, n) of a 16-lane block, for the row's last, partial block.
STRATA_AVX512 inline __mmask16 first_lanes(std::int64_t n) {
  return static_cast<__mmask16>((1u << n) - 1u);
}

// exp_poly (strata/core/exp_poly.h) on 16 lanes: k = round(x / ln 2) by vrndscaleps, r = x - k ln 2
// in two parts, the degree-7 polynomial, and 2^k applied by vscalefps, whose zeroing mask
// gives exactly 0 below log(FLT_MIN). max/min take the constant first so that a NaN passes.
STRATA_AVX512 inline __m512 exp16(__m512 x) {
  const __m512 min = _mm512_set1_ps(-87.33654f), max = _mm512_set1_ps(88.0f);
  const __m512 xc = _mm512_min_ps(max, _mm512_max_ps(min, x));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693359375f), xc);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_add_ps(_mm512_fmadd_ps(_mm512_mul_ps(p, r), r, r), _mm512_set1_ps(1.0f));
  const __mmask16 normal = _mm512_cmp_ps_mask(x, min, _CMP_NLT_UQ);  // x >= min, or NaN
  return _mm512_maskz_scalef_ps(normal, y, k);
}

// A float's bits as an int32 ordered as the floats are (fused_tiles.cpp's row_max says why).
STRATA_AVX512 inline __m512i order_key(__m512i bits) {
  return _mm512_xor_si512(bits, _mm512_and_si512(_mm512_srai_epi32(bits, 31),
                                                 _mm512_set1_epi32(0x7fffffff)));
}

STRATA_AVX512 float row_max(const float* x, std::int64_t n) {
  if (n == 0) return -std::numeric_limits<float>::infinity();
  __m512i key = _mm512_set1_epi32(std::numeric_limits<std::int32_t>::min());
  std::int64_t c = 0;
  for (; c + 16 <= n; c += 16) key = _mm512_max_epi32(key, order_key(_mm512_loadu_si512(x + c)));
  if (c < n) {
    const __mmask16 m = first_lanes(n - c);
    key = _mm512_mask_max_epi32(key, m, key, order_key(_mm512_maskz_loadu_epi32(m, x + c)));
  }
  const std::int32_t best = _mm512_reduce_max_epi32(key);
  return __builtin_bit_cast(float, best ^ ((best >> 31) & 0x7fffffff));
}

STRATA_AVX512 float exp_shifted_sum(float* x, std::int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  std::int64_t c = 0;
  for (; c + 16 <= n; c += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(x + c), s));
    _mm512_storeu_ps(x + c, e);
    sum = _mm512_add_ps(sum, e);
  }
  if (c < n) {
    const __mmask16 m = first_lanes(n - c);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), s));
    _mm512_mask_storeu_ps(x + c, m, e);
    sum = _mm512_mask_add_ps(sum, m, sum, e);
  }
  return _mm512_reduce_add_ps(sum);
}

STRATA_AVX512 void exp_shifted(float* x, std::int64_t n, float shift) {
  const __m512 s = _mm512_set1_ps(shift);
  std::int64_t c = 0;
  for (; c + 16 <= n; c += 16) _mm512_storeu_ps(x + c, exp16(_mm512_sub_ps(_mm512_loadu_ps(x + c), s)));
  if (c < n) {
    const __mmask16 m = first_lanes(n - c);
    _mm512_mask_storeu_ps(x + c, m, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + c), s)));
  }
}

}  // namespace

const SimdRows* avx512_rows() {
  static const SimdRows rows{row_max, exp_shifted_sum, exp_shifted};
  static const bool runs = __builtin_cpu_supports("avx512f");
  return runs ? &rows : nullptr;
}

}  // namespace strata::attn::tiles

#else

namespace strata::attn::tiles {

const SimdRows* avx512_rows() { return nullptr; }

}  // namespace strata::attn::tiles

#endif
