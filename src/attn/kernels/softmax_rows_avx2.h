#pragma once
// The softmax's row loops (the maximum, exp(x - shift) and its sum) in AVX2 + FMA intrinsics,
// for fused_tiles.cpp to call where the CPU has those but not AVX-512F (softmax_rows_avx512.h
// there). GCC vectorises the plain loops 8 lanes wide too, but sums a row's lanes through the
// stack, float by float, and keeps the exp's constants there: a fifth of the forward softmax's
// samples on Zen 3. The same Cephes polynomial as the plain loop, so the same accuracy.
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define STRATA_SOFTMAX_ROWS_AVX2 1

namespace strata::attn::tiles::avx2 {

// Whether this CPU runs the functions below (AVX2 and FMA); checked once.
bool available();

// The maximum of x[0..n), -inf for n = 0, ordered as floats are (-inf included).
float row_max(const float* x, std::int64_t n);

// x[c] = exp(x[c] - shift) for c < n, returning their sum. exp of anything below log(FLT_MIN)
// is exactly 0 (hidden scores are -inf).
float exp_shifted_sum(float* x, std::int64_t n, float shift);

// x[c] = exp(x[c] - shift) for c < n.
void exp_shifted(float* x, std::int64_t n, float shift);

}  // namespace strata::attn::tiles::avx2

#endif
