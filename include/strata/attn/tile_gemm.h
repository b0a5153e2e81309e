#pragma once
// C = alpha * op(A) B + beta * C, row-major, op(A) = A or A^T: the fused kernel's tile products
// (a few dozen rows and columns, a depth of a tile or a head) and, a band of rows at a time,
// the linear layers' products (strata/nn/linear_product.h).
//
// fp32 runs a register-blocked AVX-512 micro-kernel where the CPU has AVX-512F (tile_gemm.cpp
// says how it is blocked) and BLAS sgemm elsewhere; fp64 (gradient checks) always runs BLAS
// dgemm. At these sizes a BLAS call spends much of its time outside its inner kernel (argument
// checks, packing, dispatch), and the Haswell kernel that OPENBLAS_CORETYPE=Haswell selects is
// AVX2 only.
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

// Whether this build and CPU run the AVX-512 micro-kernel (whatever STRATA_TILE_GEMM says).
bool has_avx512_micro_kernel();

// The micro-kernel alone, for tests and the linear layers: false (and nothing computed) where
// the CPU lacks AVX-512F.
bool tile_gemm_avx512(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                      const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                      float beta, float* c, std::int64_t ldc);

}  // namespace strata::attn
