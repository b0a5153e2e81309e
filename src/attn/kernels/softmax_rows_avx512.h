#pragma once
// The softmax's row loops (the maximum, exp(x - shift) and its sum) in AVX-512 intrinsics, for
// fused_tiles.cpp to call where the CPU has AVX-512F. Plain loops leave two costs that GCC cannot
// remove: it vectorises them 8 lanes wide (its tuning prefers 256-bit vectors), and the exp
// builds 2^k from integer bit tricks and blends where AVX-512 has one instruction each
// (vrndscaleps, vscalefps with a zeroing mask). The same Cephes polynomial as the plain loop,
// so the same accuracy; summed in 16 lanes.
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STRATA_SOFTMAX_ROWS_AVX512 1

namespace strata::attn::tiles::avx512 {

// Whether this CPU runs the functions below (AVX-512F); checked once.
bool available();

// The maximum of x[0..n), -inf for n = 0, ordered as floats are (-inf included).
float row_max(const float* x, std::int64_t n);

// x[c] = exp(x[c] - shift) for c < n, returning their sum. exp of anything below log(FLT_MIN)
// is exactly 0 (hidden scores are -inf).
float exp_shifted_sum(float* x, std::int64_t n, float shift);

// x[c] = exp(x[c] - shift) for c < n.
void exp_shifted(float* x, std::int64_t n, float shift);

}  // namespace strata::attn::tiles::avx512

#endif
