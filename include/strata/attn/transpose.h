#pragma once
// dst = srcᵀ for a block of a row-major matrix: dst[c * ldd + r] = src[r * lds + c] for
// r < rows, c < cols. The fused kernel's per-head copies of K and V, key tile by key tile
// (fused_plan.h, HeadTranspose), and the linear layers' Wᵀ use it.
//
// fp32 runs 16 x 16 blocks in AVX-512 registers where the CPU has AVX-512F: 16 row loads, 64
// shuffles and 16 stores a block, where the element-by-element copy read a column of 16 rows
// for every 16 values it wrote (a head's K^T was 10 % of same_section's time at L = 1,024).
// With AVX2 but not AVX-512F, 8 x 8 blocks in ymm registers (the edges past whole blocks by a
// plain loop). Elsewhere, and for fp64, a plain loop.
#include <cstdint>

namespace strata::attn {

void transpose(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
               std::int64_t ldd);
void transpose(const double* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, double* dst,
               std::int64_t ldd);

}  // namespace strata::attn
