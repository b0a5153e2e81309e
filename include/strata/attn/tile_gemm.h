#pragma once
// C = alpha * op(A) B + beta * C, row-major, op(A) = A or A^T: the fused kernel's tile products
// (a few dozen rows and columns, a depth of a tile or a head) and, a band of rows at a time,
// the linear layers' products (strata/nn/linear_product.h).
//
// fp32 runs a register-blocked micro-kernel, AVX-512 where the CPU has AVX-512F, AVX2 + FMA
// where it has those (tile_gemm.cpp says how each is blocked), BLAS sgemm elsewhere; fp64
// (gradient checks) always runs BLAS dgemm. At these sizes a BLAS call spends much of its time
// outside its inner kernel (argument checks, packing, dispatch).
//
// STRATA_TILE_GEMM=blas in the environment (read once) makes fp32 use BLAS too, so a
// benchmark can compare the two in one build; strata/attn/tile_products.h says which runs.
#include <cstdint>

namespace strata::attn {

void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);
void gemm(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc);

// B's rows at least this many elements apart are copied, band by band, by each fp32 product
// that reads them from more than one block of rows (tile_gemm.cpp says why; the AVX2 kernel
// also copies bands of 128 or more rows wherever they lie); the fused kernel copies a head it
// reads that way once instead (fused_plan.h, HeadCopy).
constexpr std::int64_t kPackRowsApart = 128;

// Ordered by width: a CPU that runs one runs those before it.
enum class MicroKernel { None, Avx2, Avx512 };

// The fastest micro-kernel this build and CPU run (whatever STRATA_TILE_GEMM says).
MicroKernel cpu_micro_kernel();

// "avx512 micro-kernel", "avx2 micro-kernel" or "none".
const char* micro_kernel_name(MicroKernel kernel);

// One micro-kernel alone, for tests and the linear layers: false (and nothing computed) where
// the CPU cannot run it (an AVX-512 CPU runs the AVX2 one too).
bool tile_gemm_micro(MicroKernel kernel, bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k,
                     float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                     float* c, std::int64_t ldc);

}  // namespace strata::attn
