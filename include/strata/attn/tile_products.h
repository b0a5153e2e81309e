#pragma once
// What the fused kernel multiplies its fp32 tiles with on this CPU, for benchmarks to print:
// "avx512 micro-kernel", "avx2 micro-kernel" or "blas sgemm" (strata/attn/tile_gemm.h says when each runs;
// STRATA_TILE_GEMM=blas in the environment picks BLAS).
namespace strata::attn {

const char* fused_tile_products();

}  // namespace strata::attn
