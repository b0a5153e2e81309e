#pragma once
// The softmax's row loops (the maximum, exp(x - shift) and its sum) in intrinsics, one set of
// them per instruction set, for fused_tiles.cpp to call where the CPU runs them.
// softmax_rows_avx512.cpp: plain loops leave two costs that GCC cannot remove there, 8-lane
// vectors (its tuning prefers 256-bit ones) and an exp that builds 2^k from integer bit tricks
// and blends where AVX-512 has one instruction each (vrndscaleps, vscalefps with a zeroing
// mask). softmax_rows_avx2.cpp: GCC vectorises the plain loops 8 lanes wide too, but sums a
// row's lanes through the stack, float by float, and keeps the exp's constants there (a fifth of
// the forward softmax's samples on Zen 3). Both use the plain loop's Cephes polynomial, so the
// same accuracy.
#include <cstdint>

namespace strata::attn::tiles {

struct SimdRows {
  // The maximum of x[0..n), -inf for n = 0, ordered as floats are (-inf included).
  float (*row_max)(const float* x, std::int64_t n);
  // x[c] = exp(x[c] - shift) for c < n, returning their sum. exp of anything below
  // log(FLT_MIN) is exactly 0 (hidden scores are -inf).
  float (*exp_shifted_sum)(float* x, std::int64_t n, float shift);
  // x[c] = exp(x[c] - shift) for c < n.
  void (*exp_shifted)(float* x, std::int64_t n, float shift);
};

// The AVX-512F rows, and the AVX2 + FMA rows: null where this build or CPU lacks them (checked
// once).
const SimdRows* avx512_rows();
const SimdRows* avx2_rows();

}  // namespace strata::attn::tiles
