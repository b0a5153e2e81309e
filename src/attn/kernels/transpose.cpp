#include "strata/attn/transpose.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// GCC 12's AVX-512 headers start some intrinsics from a deliberately undefined register.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define STRATA_TRANSPOSE_AVX512 1  // and AVX2
#endif

#include <algorithm>

#include "prefetch.h"

namespace strata::attn {

namespace {

template <class T>
void transpose_plain(const T* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, T* dst,
                     std::int64_t ldd) {
  for (std::int64_t c = 0; c < cols; ++c)
    for (std::int64_t r = 0; r < rows; ++r) dst[c * ldd + r] = src[r * lds + c];
}

#ifdef STRATA_TRANSPOSE_AVX512

#define STRATA_AVX512 __attribute__((target("avx512f")))

STRATA_AVX512 inline __m512 pairs_low(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
STRATA_AVX512 inline __m512 pairs_high(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// One block of up to 16 x 16: rows past `rows` load as zeros, columns past `cols` are neither
// read nor written, and each output row stores its first `rows` lanes.
STRATA_AVX512 void block16(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                           std::int64_t ldd) {
  const __mmask16 in_mask = static_cast<__mmask16>((1u << cols) - 1u);
  const __mmask16 out_mask = static_cast<__mmask16>((1u << rows) - 1u);
  __m512 r[16], t[16], u[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_maskz_loadu_ps(in_mask, src + i * lds) : _mm512_setzero_ps();
  // Within each 128-bit lane (columns 4L .. 4L + 3): t[2i] holds rows 2i, 2i + 1 at columns
  // 4L, 4L + 1 interleaved, t[2i + 1] the same at 4L + 2, 4L + 3.
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + j], lane L: rows 4i .. 4i + 3 at column 4L + j.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = pairs_low(t[4 * i + 0], t[4 * i + 2]);
    u[4 * i + 1] = pairs_high(t[4 * i + 0], t[4 * i + 2]);
    u[4 * i + 2] = pairs_low(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = pairs_high(t[4 * i + 1], t[4 * i + 3]);
  }
  // Output row 4L + j gathers lane L of u[j], u[4 + j], u[8 + j], u[12 + j].
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    const __m512 even_lo = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);       // lanes 0, 2 of rows 0-3, 4-7
    const __m512 odd_lo = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);        // lanes 1, 3
    const __m512 even_hi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);  // the same, rows 8-15
    const __m512 odd_hi = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    const __m512 out[4] = {_mm512_shuffle_f32x4(even_lo, even_hi, 0x88), _mm512_shuffle_f32x4(odd_lo, odd_hi, 0x88),
                           _mm512_shuffle_f32x4(even_lo, even_hi, 0xdd), _mm512_shuffle_f32x4(odd_lo, odd_hi, 0xdd)};
#pragma GCC unroll 4
    for (int lane = 0; lane < 4; ++lane) {
      const std::int64_t c = 4 * lane + j;
      if (c < cols) _mm512_mask_storeu_ps(dst + c * ldd, out_mask, out[lane]);
    }
  }
}

// The source rows of the next block of 16 are asked for while this one is transposed (the
// first call, the first two blocks'): on a head not yet in cache (the first read of K or V in a
// pass) the transpose ran at a third of a plain read's speed, 30 us a head of 1,024 x 64
// against 10; with the rows asked for ahead, 14.
STRATA_AVX512 void transpose_avx512(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                                    float* dst, std::int64_t ldd) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += 16) {
    const std::int64_t ahead = r0 == 0 ? 0 : r0 + 16, ahead_end = std::min<std::int64_t>(r0 + 32, rows);
    if (ahead < ahead_end) prefetch_rows(src + ahead * lds, lds, ahead_end - ahead, cols);
    for (std::int64_t c0 = 0; c0 < cols; c0 += 16)
      block16(src + r0 * lds + c0, lds, std::min<std::int64_t>(16, rows - r0), std::min<std::int64_t>(16, cols - c0),
              dst + c0 * ldd + r0, ldd);
  }
}

bool has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

#define STRATA_AVX2 __attribute__((target("avx2")))

// One whole 8 x 8 block in ymm registers: 8 row loads, 24 shuffles, 8 stores. The plain loop
// read a column of rows for every row it wrote: a head's K^T and V^T were 1.7 % of a training
// step's samples on Zen 3 that way.
STRATA_AVX2 void block8(const float* src, std::int64_t lds, float* dst, std::int64_t ldd) {
  __m256 r[8], t[8], u[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  // Within each 128-bit half: t[2i] holds rows 2i, 2i + 1 at its columns 0, 1 interleaved,
  // t[2i + 1] the same at its columns 2, 3.
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + j], half H: rows 4i .. 4i + 3 at column 4H + j.
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xee);
    u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xee);
  }
  // Output row j: the low halves of u[j] (rows 0-3) and u[4 + j] (rows 4-7); row 4 + j: the high ones.
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(dst + j * ldd, _mm256_permute2f128_ps(u[j], u[4 + j], 0x20));
    _mm256_storeu_ps(dst + (4 + j) * ldd, _mm256_permute2f128_ps(u[j], u[4 + j], 0x31));
  }
}

// Whole 8 x 8 blocks in registers, the ragged right and bottom edges by the plain loop, the
// next block row's source asked for ahead as on AVX-512.
STRATA_AVX2 void transpose_avx2(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                                std::int64_t ldd) {
  const std::int64_t whole_rows = rows / 8 * 8, whole_cols = cols / 8 * 8;
  for (std::int64_t r0 = 0; r0 < whole_rows; r0 += 8) {
    const std::int64_t ahead = r0 == 0 ? 0 : r0 + 8, ahead_end = std::min<std::int64_t>(r0 + 16, rows);
    if (ahead < ahead_end) prefetch_rows(src + ahead * lds, lds, ahead_end - ahead, cols);
    for (std::int64_t c0 = 0; c0 < whole_cols; c0 += 8) block8(src + r0 * lds + c0, lds, dst + c0 * ldd + r0, ldd);
  }
  if (whole_cols < cols)
    transpose_plain(src + whole_cols, lds, whole_rows, cols - whole_cols, dst + whole_cols * ldd, ldd);
  if (whole_rows < rows)
    transpose_plain(src + whole_rows * lds, lds, rows - whole_rows, cols, dst + whole_rows, ldd);
}

bool has_avx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}

#endif

}  // namespace

void transpose(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
               std::int64_t ldd) {
#ifdef STRATA_TRANSPOSE_AVX512
  if (has_avx512()) return transpose_avx512(src, lds, rows, cols, dst, ldd);
  if (has_avx2()) return transpose_avx2(src, lds, rows, cols, dst, ldd);
#endif
  transpose_plain(src, lds, rows, cols, dst, ldd);
}

void transpose(const double* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, double* dst,
               std::int64_t ldd) {
  transpose_plain(src, lds, rows, cols, dst, ldd);
}

}  // namespace strata::attn
