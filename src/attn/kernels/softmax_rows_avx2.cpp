#include "softmax_rows.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>

#include <limits>

#define STRATA_AVX2 __attribute__((target("avx2,fma")))

namespace strata::attn::tiles {

namespace {

// Lane l is kept where l < n (n in 1 .. 8): the row's last, partial vector.
STRATA_AVX2 inline __m256i first_lanes(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// exp_poly (strata/core/exp_poly.h) on 8 lanes: k = round(x / ln 2), r = x - k ln 2 in two
// parts, the degree-7 polynomial, times 2^k built in the exponent bits; 0 below log(FLT_MIN).
// max/min take the constant first so that a NaN passes.
STRATA_AVX2 inline __m256 exp8(__m256 x) {
  const __m256 min = _mm256_set1_ps(-87.33654f), max = _mm256_set1_ps(88.0f);
  const __m256 xc = _mm256_min_ps(max, _mm256_max_ps(min, x));
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  const __m256 y = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  const __m256 normal = _mm256_cmp_ps(x, min, _CMP_NLT_UQ);  // x >= min, or NaN
  return _mm256_and_ps(normal, _mm256_mul_ps(y, _mm256_castsi256_ps(bits)));
}

// A float's bits as an int32 ordered as the floats are (fused_tiles.cpp's row_max says why).
STRATA_AVX2 inline __m256i order_key(__m256i bits) {
  return _mm256_xor_si256(bits, _mm256_and_si256(_mm256_srai_epi32(bits, 31), _mm256_set1_epi32(0x7fffffff)));
}

STRATA_AVX2 inline float lane_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

STRATA_AVX2 inline std::int32_t lane_max(__m256i v) {
  __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4e));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0xb1));
  return _mm_cvtsi128_si32(m);
}

STRATA_AVX2 float row_max(const float* x, std::int64_t n) {
  if (n == 0) return -std::numeric_limits<float>::infinity();
  const __m256i lowest = _mm256_set1_epi32(std::numeric_limits<std::int32_t>::min());
  __m256i key = lowest;
  std::int64_t c = 0;
  for (; c + 8 <= n; c += 8)
    key = _mm256_max_epi32(key, order_key(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + c))));
  if (c < n) {
    const __m256i m = first_lanes(n - c);
    const __m256i tail = order_key(_mm256_castps_si256(_mm256_maskload_ps(x + c, m)));
    key = _mm256_max_epi32(key, _mm256_blendv_epi8(lowest, tail, m));
  }
  const std::int32_t best = lane_max(key);
  return __builtin_bit_cast(float, best ^ ((best >> 31) & 0x7fffffff));
}

STRATA_AVX2 float exp_shifted_sum(float* x, std::int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 sum = _mm256_setzero_ps();
  std::int64_t c = 0;
  for (; c + 8 <= n; c += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + c), s));
    _mm256_storeu_ps(x + c, e);
    sum = _mm256_add_ps(sum, e);
  }
  if (c < n) {
    const __m256i m = first_lanes(n - c);
    const __m256 e = _mm256_and_ps(_mm256_castsi256_ps(m), exp8(_mm256_sub_ps(_mm256_maskload_ps(x + c, m), s)));
    _mm256_maskstore_ps(x + c, m, e);
    sum = _mm256_add_ps(sum, e);
  }
  return lane_sum(sum);
}

STRATA_AVX2 void exp_shifted(float* x, std::int64_t n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  std::int64_t c = 0;
  for (; c + 8 <= n; c += 8) _mm256_storeu_ps(x + c, exp8(_mm256_sub_ps(_mm256_loadu_ps(x + c), s)));
  if (c < n) {
    const __m256i m = first_lanes(n - c);
    _mm256_maskstore_ps(x + c, m, exp8(_mm256_sub_ps(_mm256_maskload_ps(x + c, m), s)));
  }
}

}  // namespace

const SimdRows* avx2_rows() {
  static const SimdRows rows{row_max, exp_shifted_sum, exp_shifted};
  static const bool runs = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return runs ? &rows : nullptr;
}

}  // namespace strata::attn::tiles

#else

namespace strata::attn::tiles {

const SimdRows* avx2_rows() { return nullptr; }

}  // namespace strata::attn::tiles

#endif
