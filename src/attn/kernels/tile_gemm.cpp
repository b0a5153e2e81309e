#include "strata/attn/tile_gemm.h"

#include "strata/attn/tile_products.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define STRATA_HAVE_AVX512_KERNEL 1
#endif

namespace strata::attn {

namespace {

CBLAS_TRANSPOSE op(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

void blas_gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
               float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, op(trans_a), CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

#ifdef STRATA_HAVE_AVX512_KERNEL

// The micro-kernel: a block of kRows rows of C by up to kVectors × 16 columns lives in
// registers (6 × 4 = 24 of the 32 zmm, plus 4 for a row of B and 1 for a broadcast), and the
// depth loop adds the outer product of one column of op(A) (broadcast element by element)
// and one row of B. op(A)'s element (i, p) is a[i * row_step + p * depth_step], so A and A^T
// are the same loop over different strides. Columns past n are masked, never read or written.
// 24 FMAs per 4 loads of B and 6 broadcasts keep the FMA units busy from L1.
constexpr int kRows = 6;
constexpr int kVectors = 4;
constexpr std::int64_t kBlockColumns = 16 * kVectors;

#define STRATA_AVX512 __attribute__((target("avx512f")))

// Aligned to a cache line so that the depth loop's place in the op cache, and with it the
// kernel's speed, does not move with unrelated changes elsewhere in the binary (a 5 % swing
// at L = 4,096 was seen between two builds that differed only outside this file).
template <int Rows, int Vectors>
STRATA_AVX512 __attribute__((aligned(64))) inline void block(std::int64_t k, float alpha, const float* a, std::int64_t row_step,
                                std::int64_t depth_step, const float* b, std::int64_t ldb,
                                float beta, float* c, std::int64_t ldc, __mmask16 last) {
  __m512 acc[Rows][Vectors];
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) acc[i][v] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < k; ++p) {
    const float* b_row = b + p * ldb;
    __m512 b_vec[Vectors];
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v)
      b_vec[v] = v + 1 < Vectors ? _mm512_loadu_ps(b_row + 16 * v)
                                 : _mm512_maskz_loadu_ps(last, b_row + 16 * v);
    const float* a_col = a + p * depth_step;
#pragma GCC unroll 8
    for (int i = 0; i < Rows; ++i) {
      const __m512 a_vec = _mm512_set1_ps(a_col[i * row_step]);
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) acc[i][v] = _mm512_fmadd_ps(a_vec, b_vec[v], acc[i][v]);
    }
  }
  const __m512 alpha_vec = _mm512_set1_ps(alpha), beta_vec = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) {
      float* out = c + i * ldc + 16 * v;
      const __mmask16 mask = v + 1 < Vectors ? __mmask16(0xffff) : last;
      __m512 r = _mm512_mul_ps(acc[i][v], alpha_vec);
      // beta 0 never reads C, as BLAS: what C held (even NaN) must not leak in.
      if (beta != 0.0f) r = _mm512_fmadd_ps(beta_vec, _mm512_maskz_loadu_ps(mask, out), r);
      _mm512_mask_storeu_ps(out, mask, r);
    }
}

// Every row of C for one band of up to kBlockColumns columns.
template <int Vectors>
STRATA_AVX512 void band(std::int64_t m, std::int64_t k, float alpha, const float* a,
                        std::int64_t row_step, std::int64_t depth_step, const float* b,
                        std::int64_t ldb, float beta, float* c, std::int64_t ldc, __mmask16 last) {
  std::int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    block<kRows, Vectors>(k, alpha, a + i * row_step, row_step, depth_step, b, ldb, beta,
                          c + i * ldc, ldc, last);
  const float* a_rest = a + i * row_step;
  float* c_rest = c + i * ldc;
  switch (m - i) {
    case 5: block<5, Vectors>(k, alpha, a_rest, row_step, depth_step, b, ldb, beta, c_rest, ldc, last); break;
    case 4: block<4, Vectors>(k, alpha, a_rest, row_step, depth_step, b, ldb, beta, c_rest, ldc, last); break;
    case 3: block<3, Vectors>(k, alpha, a_rest, row_step, depth_step, b, ldb, beta, c_rest, ldc, last); break;
    case 2: block<2, Vectors>(k, alpha, a_rest, row_step, depth_step, b, ldb, beta, c_rest, ldc, last); break;
    case 1: block<1, Vectors>(k, alpha, a_rest, row_step, depth_step, b, ldb, beta, c_rest, ldc, last); break;
    default: break;
  }
}

STRATA_AVX512 void avx512_gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k,
                               float alpha, const float* a, std::int64_t lda, const float* b,
                               std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const std::int64_t row_step = trans_a ? 1 : lda, depth_step = trans_a ? lda : 1;
  for (std::int64_t j = 0; j < n; j += kBlockColumns) {
    const std::int64_t width = std::min(kBlockColumns, n - j);
    const int vectors = static_cast<int>((width + 15) / 16);
    const int last_width = static_cast<int>(width - 16 * (vectors - 1));  // 1 .. 16
    const __mmask16 last = static_cast<__mmask16>((1u << last_width) - 1u);
    const float* b_band = b + j;
    float* c_band = c + j;
    switch (vectors) {
      case 4: band<4>(m, k, alpha, a, row_step, depth_step, b_band, ldb, beta, c_band, ldc, last); break;
      case 3: band<3>(m, k, alpha, a, row_step, depth_step, b_band, ldb, beta, c_band, ldc, last); break;
      case 2: band<2>(m, k, alpha, a, row_step, depth_step, b_band, ldb, beta, c_band, ldc, last); break;
      default: band<1>(m, k, alpha, a, row_step, depth_step, b_band, ldb, beta, c_band, ldc, last); break;
    }
  }
}

bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f"); }

#else

bool cpu_has_avx512() { return false; }

#endif

bool use_micro_kernel() {
  static const bool use = [] {
    const char* choice = std::getenv("STRATA_TILE_GEMM");
    return cpu_has_avx512() && !(choice && std::string_view(choice) == "blas");
  }();
  return use;
}

}  // namespace

bool has_avx512_micro_kernel() { return cpu_has_avx512(); }

bool tile_gemm_avx512(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                      const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                      float beta, float* c, std::int64_t ldc) {
#ifdef STRATA_HAVE_AVX512_KERNEL
  if (!cpu_has_avx512()) return false;
  avx512_gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
#else
  return false;
#endif
}

void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (use_micro_kernel())
    tile_gemm_avx512(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    blas_gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(trans_a), CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

const char* fused_tile_products() { return use_micro_kernel() ? "avx512 micro-kernel" : "blas sgemm"; }

}  // namespace strata::attn
