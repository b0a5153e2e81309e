#include "strata/attn/tile_gemm.h"

#include "strata/attn/tile_products.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define STRATA_HAVE_X86_KERNELS 1
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

#ifdef STRATA_HAVE_X86_KERNELS

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

// The AVX2 micro-kernel, for CPUs without AVX-512F (Zen 3, Intel's client cores): the same
// loop in 16 ymm registers, a block of 6 rows by up to 2 × 8 columns (12 accumulators, 2 for a
// row of B, 1 for a broadcast), 12 FMAs per 2 loads of B and 6 broadcasts. AVX2's masked loads
// are slower than plain ones, so a band whose last vector is whole (every band of a 64-column
// tile) never masks.
constexpr int kAvx2Rows = 6;
constexpr int kAvx2Vectors = 2;
constexpr std::int64_t kAvx2BandColumns = 8 * kAvx2Vectors;

#define STRATA_AVX2 __attribute__((target("avx2,fma")))

template <int Rows, int Vectors, bool Masked>
STRATA_AVX2 __attribute__((aligned(64))) inline void block_avx2(std::int64_t k, float alpha, const float* a,
                                                                std::int64_t row_step, std::int64_t depth_step,
                                                                const float* b, std::int64_t ldb, float beta, float* c,
                                                                std::int64_t ldc, __m256i last) {
  __m256 acc[Rows][Vectors];
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v) acc[i][v] = _mm256_setzero_ps();
  // The last vector's lanes past n are neither read nor written.
  for (std::int64_t p = 0; p < k; ++p) {
    const float* b_row = b + p * ldb;
    __m256 b_vec[Vectors];
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v)
      b_vec[v] = Masked && v + 1 == Vectors ? _mm256_maskload_ps(b_row + 8 * v, last) : _mm256_loadu_ps(b_row + 8 * v);
    const float* a_col = a + p * depth_step;
#pragma GCC unroll 8
    for (int i = 0; i < Rows; ++i) {
      const __m256 a_vec = _mm256_broadcast_ss(a_col + i * row_step);
#pragma GCC unroll 2
      for (int v = 0; v < Vectors; ++v) acc[i][v] = _mm256_fmadd_ps(a_vec, b_vec[v], acc[i][v]);
    }
  }
  const __m256 alpha_vec = _mm256_set1_ps(alpha), beta_vec = _mm256_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < Rows; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < Vectors; ++v) {
      float* out = c + i * ldc + 8 * v;
      __m256 r = _mm256_mul_ps(acc[i][v], alpha_vec);
      if (beta != 0.0f) {  // beta 0 never reads C
        const __m256 before = Masked && v + 1 == Vectors ? _mm256_maskload_ps(out, last) : _mm256_loadu_ps(out);
        r = _mm256_fmadd_ps(beta_vec, before, r);
      }
      if (Masked && v + 1 == Vectors)
        _mm256_maskstore_ps(out, last, r);
      else
        _mm256_storeu_ps(out, r);
    }
}

// Every row of C for one band of up to kAvx2BandColumns columns: blocks of 6 rows, then one
// of the 1 to 5 left.
template <int Vectors, bool Masked>
STRATA_AVX2 void band_avx2(std::int64_t m, std::int64_t k, float alpha, const float* a, std::int64_t row_step,
                           std::int64_t depth_step, const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc, __m256i last) {
  using Block = void (*)(std::int64_t, float, const float*, std::int64_t, std::int64_t, const float*, std::int64_t,
                         float, float*, std::int64_t, __m256i);
  static constexpr Block kLeft[kAvx2Rows] = {nullptr,
                                             block_avx2<1, Vectors, Masked>,
                                             block_avx2<2, Vectors, Masked>,
                                             block_avx2<3, Vectors, Masked>,
                                             block_avx2<4, Vectors, Masked>,
                                             block_avx2<5, Vectors, Masked>};
  std::int64_t i = 0;
  for (; i + kAvx2Rows <= m; i += kAvx2Rows)
    block_avx2<kAvx2Rows, Vectors, Masked>(k, alpha, a + i * row_step, row_step, depth_step, b, ldb, beta,
                                           c + i * ldc, ldc, last);
  if (i < m) kLeft[m - i](k, alpha, a + i * row_step, row_step, depth_step, b, ldb, beta, c + i * ldc, ldc, last);
}

// B's rows kPackRowsApart or more floats apart (tile_gemm.h) are copied, band by band, before
// more than one block of rows reads them. A band is one cache line of each of B's rows; rows
// 2 KB apart (a head's rows of V, K or Q, laid out as the projection wrote them) fall in 2 of
// L1's 64 sets, so a 64-row band evicts itself and every block re-reads it from L2: 64 × 64 × 64
// products ran at 60 GFLOP/s with rows 2 KB apart, 90 with rows 256 B apart, on one Zen 3 core.
// A band kPackDepth or more rows deep is copied too, wherever its rows lie: rows 256 B apart
// (a head of 64) fall in 16 sets, 8 rows a set by 128 of them. The tall tiles' dK and dV products
// (depth 256, B a head's Q or dO) ran at 65 GFLOP/s from the rows in place, 77 from the copy.
constexpr std::int64_t kPackDepth = 128;

STRATA_AVX2 void avx2_gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                           const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                           float* c, std::int64_t ldc) {
  const std::int64_t row_step = trans_a ? 1 : lda, depth_step = trans_a ? lda : 1;
  const bool pack = (ldb >= kPackRowsApart || k >= kPackDepth) && m > kAvx2Rows;
  thread_local std::vector<float> packed;
  if (pack && static_cast<std::int64_t>(packed.size()) < k * kAvx2BandColumns)
    packed.resize(static_cast<std::size_t>(k * kAvx2BandColumns));
  for (std::int64_t j = 0; j < n; j += kAvx2BandColumns) {
    const std::int64_t width = std::min(kAvx2BandColumns, n - j);
    const float* band_b = b + j;
    std::int64_t band_ldb = ldb;
    if (pack) {
      if (width == kAvx2BandColumns)
        for (std::int64_t p = 0; p < k; ++p) {
          const float* from = b + p * ldb + j;
          float* to = packed.data() + p * kAvx2BandColumns;
          _mm256_storeu_ps(to, _mm256_loadu_ps(from));
          _mm256_storeu_ps(to + 8, _mm256_loadu_ps(from + 8));
        }
      else
        for (std::int64_t p = 0; p < k; ++p)
          std::copy_n(b + p * ldb + j, width, packed.data() + p * kAvx2BandColumns);
      band_b = packed.data();
      band_ldb = kAvx2BandColumns;
    }
    const bool two = width > 8, masked = width % 8 != 0;
    // Lane l of the last vector is kept where l < its width (1 .. 8).
    const __m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(width - (two ? 8 : 0))),
                                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const auto run = two ? (masked ? band_avx2<2, true> : band_avx2<2, false>)
                         : (masked ? band_avx2<1, true> : band_avx2<1, false>);
    run(m, k, alpha, a, row_step, depth_step, band_b, band_ldb, beta, c + j, ldc, last);
  }
}

MicroKernel cpu_micro_kernel_once() {
  if (__builtin_cpu_supports("avx512f")) return MicroKernel::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return MicroKernel::Avx2;
  return MicroKernel::None;
}

#else

MicroKernel cpu_micro_kernel_once() { return MicroKernel::None; }

#endif

// The micro-kernel gemm() runs: the CPU's, unless STRATA_TILE_GEMM=blas.
MicroKernel chosen_micro_kernel() {
  static const MicroKernel chosen = [] {
    const char* choice = std::getenv("STRATA_TILE_GEMM");
    return choice && std::string_view(choice) == "blas" ? MicroKernel::None : cpu_micro_kernel();
  }();
  return chosen;
}

}  // namespace

MicroKernel cpu_micro_kernel() {
  static const MicroKernel kernel = cpu_micro_kernel_once();
  return kernel;
}

bool tile_gemm_micro(MicroKernel kernel, bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                     const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                     std::int64_t ldc) {
  if (kernel == MicroKernel::None || kernel > cpu_micro_kernel()) return false;
#ifdef STRATA_HAVE_X86_KERNELS
  if (kernel == MicroKernel::Avx512)
    avx512_gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    avx2_gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
#else
  return false;
#endif
}

void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (!tile_gemm_micro(chosen_micro_kernel(), trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
    blas_gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, op(trans_a), CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

const char* micro_kernel_name(MicroKernel kernel) {
  switch (kernel) {
    case MicroKernel::Avx512: return "avx512 micro-kernel";
    case MicroKernel::Avx2: return "avx2 micro-kernel";
    default: return "none";
  }
}

const char* fused_tile_products() {
  const MicroKernel kernel = chosen_micro_kernel();
  return kernel == MicroKernel::None ? "blas sgemm" : micro_kernel_name(kernel);
}

}  // namespace strata::attn
