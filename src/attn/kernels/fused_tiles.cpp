#include "fused_tiles.h"

#include "softmax_rows.h"
#include "strata/attn/counter_random.h"
#include "strata/core/exp_poly.h"
#include "strata/core/vector_clones.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

// Every fp32 entry point is compiled for AVX-512, AVX2 and baseline x86-64
// (strata/core/vector_clones.h); the bodies are templates inlined into each clone. Targeting
// x86-64-v4 rather than AVX-512F alone made the fused dense kernel 4.7 % faster on one Zen 4
// thread, the same sums in the same order. The Gumbel noise must equal gumbel_at()'s scalar
// arithmetic to the bit, so it has no clone that may fuse multiplies and adds (FMA).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define STRATA_UNFUSED_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define STRATA_UNFUSED_CLONES
#endif

// Float compares may raise FP exceptions, so by default GCC will not turn the selects below
// (clamps, masking) into vector blends. Nothing here reads the FP exception flags.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

namespace strata::attn::tiles {

namespace {

constexpr int kLanes = 8;  // one AVX2 register of floats; reductions keep this many partials

// The softmax's row loops go to the widest intrinsics rows this CPU runs (softmax_rows.h), the
// plain loops below where it runs none.
const SimdRows* const kSimdRows = avx512_rows() ? avx512_rows() : avx2_rows();

// Cephes logf for a positive normal x: x = m 2^e with m in [sqrt(1/2), sqrt(2)), log(m) by a
// degree-9 polynomial in m - 1, e ln 2 added in two parts. Branch-free.
STRATA_INLINE float log_poly(float x) {
  const std::int32_t bits = __builtin_bit_cast(std::int32_t, x);
  std::int32_t e = ((bits >> 23) & 0xff) - 126;  // x = m 2^e, m in [0.5, 1)
  float m = __builtin_bit_cast(float, (bits & 0x007fffff) | 0x3f000000);
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  m = low ? m + m - 1.0f : m - 1.0f;
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  const float ef = static_cast<float>(e);
  y += ef * -2.12194440e-4f;
  y -= 0.5f * z;
  return (m + y) + ef * 0.693359375f;
}

// -log(u) for u = counter_uniform_at's value of counter_draw_at's bits.
STRATA_INLINE float minus_log_uniform(std::int32_t bits) {
  float u = (static_cast<float>(bits) + 0.5f) * (1.0f / 16777216.0f);
  u = u < 0x1.fffffep-1f ? u : 0x1.fffffep-1f;  // as counter_uniform_at: never 1
  return -log_poly(u);
}

STRATA_INLINE float gumbel_t(std::uint64_t row, std::int64_t n) {
  return -log_poly(minus_log_uniform(counter_draw_at(row, n)));
}

// Three loops, the 64-bit hashing, then each log, so that each vectorises at its width
// (one loop of both logs runs several times slower: register pressure).
template <class T>
STRATA_INLINE void add_gumbel_t(T* x, std::uint64_t row, std::int64_t n0, std::int64_t count) {
  constexpr std::int64_t kChunk = 64;
  std::int32_t bits[kChunk];
  float t[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = count - c0 < kChunk ? count - c0 : kChunk;
    for (std::int64_t c = 0; c < m; ++c) bits[c] = counter_draw_at(row, n0 + c0 + c);
    for (std::int64_t c = 0; c < m; ++c) t[c] = minus_log_uniform(bits[c]);
    for (std::int64_t c = 0; c < m; ++c) x[c0 + c] += static_cast<T>(-log_poly(t[c]));
  }
}

// Two loops, the hashing and then the factors, each vectorising at its width. Multiply: f
// times each factor (apply_dropout); otherwise f is the factors (dropout_factors).
template <bool Multiply, class T>
STRATA_INLINE void dropout_t(T* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                             std::int32_t first_kept, T kept) {
  constexpr std::int64_t kChunk = 64;
  std::int32_t bits[kChunk];
  for (std::int64_t c0 = 0; c0 < count; c0 += kChunk) {
    const std::int64_t m = count - c0 < kChunk ? count - c0 : kChunk;
    for (std::int64_t c = 0; c < m; ++c) bits[c] = counter_draw_at(row, n0 + c0 + c);
    for (std::int64_t c = 0; c < m; ++c) {
      const T factor = bits[c] >= first_kept ? kept : T(0);
      f[c0 + c] = Multiply ? f[c0 + c] * factor : factor;
    }
  }
}

template <class T>
STRATA_INLINE T exp_any(T x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_poly(x);
  else
    return std::exp(x);
}

// The maximum of x[0..n). For floats the compare-and-select does not vectorise (NaN and
// signed-zero rules), so it runs on order-preserving integer keys instead: a float's bits
// as int32, with the magnitude bits flipped for negatives, order exactly as the floats do
// (-inf included), and integer max vectorises.
STRATA_INLINE float row_max(const float* x, std::int64_t n) {
  if (kSimdRows) return kSimdRows->row_max(x, n);
  std::int32_t key = std::numeric_limits<std::int32_t>::min();
  for (std::int64_t c = 0; c < n; ++c) {
    const std::int32_t bits = __builtin_bit_cast(std::int32_t, x[c]);
    const std::int32_t k = bits ^ ((bits >> 31) & 0x7fffffff);
    key = key > k ? key : k;
  }
  if (n == 0) return -std::numeric_limits<float>::infinity();
  return __builtin_bit_cast(float, key ^ ((key >> 31) & 0x7fffffff));
}

STRATA_INLINE double row_max(const double* x, std::int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < n; ++c) m = m > x[c] ? m : x[c];
  return m;
}

// x[c] = exp(x[c] - shift), returning the sum of the results.
template <class T>
STRATA_INLINE T exp_shifted_sum(T* x, std::int64_t n, T shift) {
  if constexpr (std::is_same_v<T, float>)
    if (kSimdRows) return kSimdRows->exp_shifted_sum(x, n, shift);
  T lanes[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      x[c + l] = exp_any<T>(x[c + l] - shift);
      lanes[l] += x[c + l];
    }
  T sum = 0;
  for (; c < n; ++c) {
    x[c] = exp_any<T>(x[c] - shift);
    sum += x[c];
  }
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

// x[c] = exp(x[c] - shift).
template <class T>
STRATA_INLINE void exp_shifted(T* x, std::int64_t n, T shift) {
  if constexpr (std::is_same_v<T, float>)
    if (kSimdRows) return kSimdRows->exp_shifted(x, n, shift);
  for (std::int64_t c = 0; c < n; ++c) x[c] = exp_any<T>(x[c] - shift);
}

template <class T>
STRATA_INLINE void exp_inplace_t(T* x, std::int64_t n) {
  for (std::int64_t c = 0; c < n; ++c) x[c] = exp_any<T>(x[c]);
}

template <class T>
STRATA_INLINE void mask_hidden_t(T* s, std::int64_t lds, const std::uint8_t* visible,
                                 std::int64_t ldv, std::int64_t rows, std::int64_t cols) {
  constexpr T kHidden = -std::numeric_limits<T>::infinity();
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    const std::uint8_t* vis = visible + r * ldv;
    for (std::int64_t c = 0; c < cols; ++c) row[c] = vis[c] ? row[c] : kHidden;
  }
}

template <class T>
void mask_outside_runs_t(T* s, std::int64_t lds, const std::int64_t* first, const std::int64_t* last,
                         std::int64_t rows, std::int64_t c0, std::int64_t cols) {
  constexpr T kHidden = -std::numeric_limits<T>::infinity();
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    const std::int64_t keep_from = std::clamp(first[r] - c0, std::int64_t{0}, cols);
    const std::int64_t keep_to = std::clamp(last[r] - c0, keep_from, cols);
    std::fill(row, row + keep_from, kHidden);
    std::fill(row + keep_to, row + cols, kHidden);
  }
}

// The rows' new maxima first, then every row's rescale factor exp(old max - new max) in one
// vector pass (a libm call per row cost half as much as the row's 64 exps), then the exps.
template <class T>
STRATA_INLINE void online_softmax_t(T* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                                    T* running_max, T* running_sum, T* rescale) {
  constexpr T kNone = -std::numeric_limits<T>::infinity();
  for (std::int64_t r = 0; r < rows; ++r) {
    const T old_max = running_max[r], tile_max = row_max(s + r * lds, cols);
    const T new_max = old_max > tile_max ? old_max : tile_max;
    // exp(-inf) is the 0 a row that saw nothing before needs; -inf - -inf would be NaN.
    rescale[r] = new_max == kNone ? T(0) : old_max - new_max;
    running_max[r] = new_max;
  }
  exp_shifted(rescale, rows, T(0));
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    if (running_max[r] == kNone) {  // nothing visible so far
      for (std::int64_t c = 0; c < cols; ++c) row[c] = 0;
      rescale[r] = 1;
      continue;
    }
    running_sum[r] = running_sum[r] * rescale[r] + exp_shifted_sum(row, cols, running_max[r]);
  }
}

template <class T>
STRATA_INLINE void max_rows_t(const T* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                              T* max) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T m = row_max(s + r * lds, cols);
    max[r] = max[r] > m ? max[r] : m;
  }
}

template <class T>
STRATA_INLINE void exp_shift_sum_rows_t(T* s, std::int64_t lds, std::int64_t rows,
                                        std::int64_t cols, const T* shift, T* sum) {
  constexpr T kNone = -std::numeric_limits<T>::infinity();
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    if (shift[r] == kNone) {
      for (std::int64_t c = 0; c < cols; ++c) row[c] = 0;
      continue;
    }
    sum[r] += exp_shifted_sum(row, cols, shift[r]);
  }
}

template <class T>
STRATA_INLINE void exp_minus_rows_t(T* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                                    const T* lse) {
  for (std::int64_t r = 0; r < rows; ++r) exp_shifted(s + r * lds, cols, lse[r]);
}

template <class T>
STRATA_INLINE void scale_rows_t(T* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                                const T* factor) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = x + r * ldx;
    const T f = factor[r];
    for (std::int64_t c = 0; c < cols; ++c) row[c] *= f;
  }
}

template <class T>
STRATA_INLINE void multiply_t(T* x, std::int64_t ldx, const T* y, std::int64_t ldy,
                              std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) x[r * ldx + c] *= y[r * ldy + c];
}

template <class T>
STRATA_INLINE void add_t(T* x, std::int64_t ldx, const T* y, std::int64_t ldy, std::int64_t rows,
                         std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) x[r * ldx + c] += y[r * ldy + c];
}

template <class T>
STRATA_INLINE void softmax_grad_t(T* dp, std::int64_t lddp, const T* p, std::int64_t ldp,
                                  std::int64_t rows, std::int64_t cols, const T* row_dot, T mult) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* d = dp + r * lddp;
    const T* pr = p + r * ldp;
    const T shift = row_dot[r];
    for (std::int64_t c = 0; c < cols; ++c) d[c] = pr[c] * (d[c] - shift) * mult;
  }
}

template <class T>
STRATA_INLINE void add_column_sums_t(const T* x, std::int64_t ldx, std::int64_t rows,
                                     std::int64_t cols, T* sums) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) sums[c] += x[r * ldx + c];
}

// Calls f(begin, end, id) for each run of equal ids in one row.
template <class F>
STRATA_INLINE void for_each_run(const std::int32_t* id, std::int64_t cols, F f) {
  for (std::int64_t c = 0; c < cols;) {
    const std::int32_t run = id[c];
    std::int64_t e = c + 1;
    while (e < cols && id[e] == run) ++e;
    f(c, e, run);
    c = e;
  }
}

template <class T>
STRATA_INLINE void add_table_bias_t(T* s, std::int64_t lds, const std::int32_t* id,
                                    std::int64_t ldi, std::int64_t rows, std::int64_t cols,
                                    const T* table) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = s + r * lds;
    for_each_run(id + r * ldi, cols, [&](std::int64_t begin, std::int64_t end, std::int32_t run) {
      if (run < 0) return;
      const T bias = table[run];
      for (std::int64_t c = begin; c < end; ++c) row[c] += bias;
    });
  }
}

template <class T>
STRATA_INLINE T sum_t(const T* x, std::int64_t n) {
  T lanes[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[c + l];
  T sum = 0;
  for (; c < n; ++c) sum += x[c];
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

template <class T>
STRATA_INLINE void add_table_grad_t(const T* ds, std::int64_t ldd, const std::int32_t* id,
                                    std::int64_t ldi, std::int64_t rows, std::int64_t cols,
                                    T* dtable) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = ds + r * ldd;
    for_each_run(id + r * ldi, cols, [&](std::int64_t begin, std::int64_t end, std::int32_t run) {
      if (run >= 0) dtable[run] += sum_t(row + begin, end - begin);
    });
  }
}

template <class T>
STRATA_INLINE void add_constant_t(T* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                                  T value) {
  for (std::int64_t r = 0; r < rows; ++r) {
    T* row = x + r * ldx;
    for (std::int64_t c = 0; c < cols; ++c) row[c] += value;
  }
}

template <class T>
STRATA_INLINE T sum_tile_t(const T* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols) {
  T total = 0;
  for (std::int64_t r = 0; r < rows; ++r) total += sum_t(x + r * ldx, cols);
  return total;
}

template <class T>
STRATA_INLINE T dot_t(const T* x, const T* y, std::int64_t n) {
  T lanes[kLanes] = {};
  std::int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += x[c + l] * y[c + l];
  T sum = 0;
  for (; c < n; ++c) sum += x[c] * y[c];
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

}  // namespace

// The exported overloads: fp32 ones are cloned per instruction set, fp64 ones are not
// (double is the gradient-check path, where speed does not matter).

STRATA_VECTOR_CLONES void apply_dropout(float* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                                        std::int32_t first_kept, float kept) {
  dropout_t<true>(f, row, n0, count, first_kept, kept);
}
STRATA_VECTOR_CLONES void apply_dropout(double* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                                        std::int32_t first_kept, double kept) {
  dropout_t<true>(f, row, n0, count, first_kept, kept);
}
STRATA_VECTOR_CLONES void dropout_factors(float* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                                          std::int32_t first_kept, float kept) {
  dropout_t<false>(f, row, n0, count, first_kept, kept);
}
STRATA_VECTOR_CLONES void dropout_factors(double* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                                          std::int32_t first_kept, double kept) {
  dropout_t<false>(f, row, n0, count, first_kept, kept);
}
STRATA_VECTOR_CLONES void exp_inplace(float* x, std::int64_t n) { exp_inplace_t(x, n); }
void exp_inplace(double* x, std::int64_t n) { exp_inplace_t(x, n); }

STRATA_VECTOR_CLONES void mask_hidden(float* s, std::int64_t lds, const std::uint8_t* visible,
                                      std::int64_t ldv, std::int64_t rows, std::int64_t cols) {
  mask_hidden_t(s, lds, visible, ldv, rows, cols);
}
void mask_hidden(double* s, std::int64_t lds, const std::uint8_t* visible, std::int64_t ldv,
                 std::int64_t rows, std::int64_t cols) {
  mask_hidden_t(s, lds, visible, ldv, rows, cols);
}

void mask_outside_runs(float* s, std::int64_t lds, const std::int64_t* first, const std::int64_t* last,
                       std::int64_t rows, std::int64_t c0, std::int64_t cols) {
  mask_outside_runs_t(s, lds, first, last, rows, c0, cols);
}
void mask_outside_runs(double* s, std::int64_t lds, const std::int64_t* first, const std::int64_t* last,
                       std::int64_t rows, std::int64_t c0, std::int64_t cols) {
  mask_outside_runs_t(s, lds, first, last, rows, c0, cols);
}

STRATA_VECTOR_CLONES void online_softmax(float* s, std::int64_t lds, std::int64_t rows,
                                         std::int64_t cols, float* row_max, float* row_sum,
                                         float* rescale) {
  online_softmax_t(s, lds, rows, cols, row_max, row_sum, rescale);
}
void online_softmax(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    double* row_max, double* row_sum, double* rescale) {
  online_softmax_t(s, lds, rows, cols, row_max, row_sum, rescale);
}

STRATA_VECTOR_CLONES void max_rows(const float* s, std::int64_t lds, std::int64_t rows,
                                   std::int64_t cols, float* max) {
  max_rows_t(s, lds, rows, cols, max);
}
void max_rows(const double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
              double* max) {
  max_rows_t(s, lds, rows, cols, max);
}

STRATA_VECTOR_CLONES void exp_shift_sum_rows(float* s, std::int64_t lds, std::int64_t rows,
                                             std::int64_t cols, const float* shift, float* sum) {
  exp_shift_sum_rows_t(s, lds, rows, cols, shift, sum);
}
void exp_shift_sum_rows(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                        const double* shift, double* sum) {
  exp_shift_sum_rows_t(s, lds, rows, cols, shift, sum);
}

STRATA_VECTOR_CLONES void exp_minus_rows(float* s, std::int64_t lds, std::int64_t rows,
                                         std::int64_t cols, const float* lse) {
  exp_minus_rows_t(s, lds, rows, cols, lse);
}
void exp_minus_rows(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    const double* lse) {
  exp_minus_rows_t(s, lds, rows, cols, lse);
}

STRATA_VECTOR_CLONES void scale_rows(float* x, std::int64_t ldx, std::int64_t rows,
                                     std::int64_t cols, const float* factor) {
  scale_rows_t(x, ldx, rows, cols, factor);
}
void scale_rows(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                const double* factor) {
  scale_rows_t(x, ldx, rows, cols, factor);
}

STRATA_VECTOR_CLONES void scale(float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                                float factor) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) x[r * ldx + c] *= factor;
}
void scale(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols, double factor) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) x[r * ldx + c] *= factor;
}

STRATA_VECTOR_CLONES void multiply(float* x, std::int64_t ldx, const float* y, std::int64_t ldy,
                                   std::int64_t rows, std::int64_t cols) {
  multiply_t(x, ldx, y, ldy, rows, cols);
}
void multiply(double* x, std::int64_t ldx, const double* y, std::int64_t ldy, std::int64_t rows,
              std::int64_t cols) {
  multiply_t(x, ldx, y, ldy, rows, cols);
}

STRATA_VECTOR_CLONES void add(float* x, std::int64_t ldx, const float* y, std::int64_t ldy,
                              std::int64_t rows, std::int64_t cols) {
  add_t(x, ldx, y, ldy, rows, cols);
}
void add(double* x, std::int64_t ldx, const double* y, std::int64_t ldy, std::int64_t rows,
         std::int64_t cols) {
  add_t(x, ldx, y, ldy, rows, cols);
}

STRATA_VECTOR_CLONES void softmax_grad(float* dp, std::int64_t lddp, const float* p,
                                       std::int64_t ldp, std::int64_t rows, std::int64_t cols,
                                       const float* row_dot, float mult) {
  softmax_grad_t(dp, lddp, p, ldp, rows, cols, row_dot, mult);
}
void softmax_grad(double* dp, std::int64_t lddp, const double* p, std::int64_t ldp,
                  std::int64_t rows, std::int64_t cols, const double* row_dot, double mult) {
  softmax_grad_t(dp, lddp, p, ldp, rows, cols, row_dot, mult);
}

STRATA_VECTOR_CLONES void add_column_sums(const float* x, std::int64_t ldx, std::int64_t rows,
                                          std::int64_t cols, float* sums) {
  add_column_sums_t(x, ldx, rows, cols, sums);
}
void add_column_sums(const double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                     double* sums) {
  add_column_sums_t(x, ldx, rows, cols, sums);
}

STRATA_VECTOR_CLONES void add_table_bias(float* s, std::int64_t lds, const std::int32_t* id,
                                         std::int64_t ldi, std::int64_t rows, std::int64_t cols,
                                         const float* table) {
  add_table_bias_t(s, lds, id, ldi, rows, cols, table);
}
void add_table_bias(double* s, std::int64_t lds, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, const double* table) {
  add_table_bias_t(s, lds, id, ldi, rows, cols, table);
}

STRATA_VECTOR_CLONES void add_table_grad(const float* ds, std::int64_t ldd, const std::int32_t* id,
                                         std::int64_t ldi, std::int64_t rows, std::int64_t cols,
                                         float* dtable) {
  add_table_grad_t(ds, ldd, id, ldi, rows, cols, dtable);
}
void add_table_grad(const double* ds, std::int64_t ldd, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, double* dtable) {
  add_table_grad_t(ds, ldd, id, ldi, rows, cols, dtable);
}

STRATA_UNFUSED_CLONES void add_gumbel(float* x, std::uint64_t row, std::int64_t n0,
                                     std::int64_t count) {
  add_gumbel_t(x, row, n0, count);
}
STRATA_UNFUSED_CLONES void add_gumbel(double* x, std::uint64_t row, std::int64_t n0,
                                     std::int64_t count) {
  add_gumbel_t(x, row, n0, count);
}
float gumbel_at(std::uint64_t row, std::int64_t n) { return gumbel_t(row, n); }

STRATA_VECTOR_CLONES void add_constant(float* x, std::int64_t ldx, std::int64_t rows,
                                       std::int64_t cols, float value) {
  add_constant_t(x, ldx, rows, cols, value);
}
void add_constant(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                  double value) {
  add_constant_t(x, ldx, rows, cols, value);
}

STRATA_VECTOR_CLONES float sum(const float* x, std::int64_t ldx, std::int64_t rows,
                               std::int64_t cols) {
  return sum_tile_t(x, ldx, rows, cols);
}
double sum(const double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols) {
  return sum_tile_t(x, ldx, rows, cols);
}

STRATA_VECTOR_CLONES float dot(const float* x, const float* y, std::int64_t n) {
  return dot_t(x, y, n);
}
double dot(const double* x, const double* y, std::int64_t n) { return dot_t(x, y, n); }

}  // namespace strata::attn::tiles
