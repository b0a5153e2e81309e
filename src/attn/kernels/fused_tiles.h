#pragma once
// The fused kernel's inner loops over one score tile: row-major [rows × cols] blocks with a
// leading dimension, in fp32 (the fast path, vectorised for AVX-512 or AVX2 where the CPU has
// it) and fp64 (gradient checks). Plain loops the compiler vectorises, built three times
// (AVX-512, AVX2, baseline) and picked at load time, so one binary runs on any x86-64; the
// softmax's exp and maximum go to softmax_rows.h's intrinsics where the CPU has AVX-512F, or
// AVX2 and FMA.
//
// std::exp does not vectorise, so fp32 uses a Cephes-style polynomial exp (relative error
// about 1e-7, see test_fused_tiles.cpp); exp of anything below the smallest normal float's
// log, -inf included, is exactly 0, which is what masked scores need.
#include <cstdint>

namespace strata::attn::tiles {

// x[c] = exp(x[c]) for c < n, by the plain polynomial loop on every CPU (the rows' functions
// below use softmax_rows.h's version of it).
void exp_inplace(float* x, std::int64_t n);
void exp_inplace(double* x, std::int64_t n);

// Scores of hidden pairs (visible[r * ldv + c] == 0) become -inf.
void mask_hidden(float* s, std::int64_t lds, const std::uint8_t* visible, std::int64_t ldv,
                 std::int64_t rows, std::int64_t cols);
void mask_hidden(double* s, std::int64_t lds, const std::uint8_t* visible, std::int64_t ldv,
                 std::int64_t rows, std::int64_t cols);

// Scores outside each row's run become -inf: row r keeps columns [first[r] - c0, last[r] - c0)
// of its `cols` (runs in the tile's columns, s starting at its column c0).
void mask_outside_runs(float* s, std::int64_t lds, const std::int64_t* first, const std::int64_t* last,
                       std::int64_t rows, std::int64_t c0, std::int64_t cols);
void mask_outside_runs(double* s, std::int64_t lds, const std::int64_t* first, const std::int64_t* last,
                       std::int64_t rows, std::int64_t c0, std::int64_t cols);

// One step of the online softmax: for each row, row_max[r] becomes the running maximum over
// this tile too, s becomes exp(s - row_max[r]), row_sum[r] = row_sum[r] * rescale[r] +
// the row's sum, where rescale[r] = exp(old max - new max) is what earlier partial outputs
// must be multiplied by. A row that has seen no visible score yet (max -inf) gets zeros and
// rescale 1.
void online_softmax(float* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    float* row_max, float* row_sum, float* rescale);
void online_softmax(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    double* row_max, double* row_sum, double* rescale);

// max[r] = the larger of max[r] and the maximum of row r (-inf stays for a row of -inf).
void max_rows(const float* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
              float* max);
void max_rows(const double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
              double* max);

// s = exp(s - shift[r]) and sum[r] += the row's sum; a row whose shift is -inf (it sees
// nothing) becomes zeros.
void exp_shift_sum_rows(float* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                        const float* shift, float* sum);
void exp_shift_sum_rows(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                        const double* shift, double* sum);

// s = exp(s - lse[r]): the normalised probabilities from a saved log-sum-exp (+inf for a row
// that sees nothing gives zeros).
void exp_minus_rows(float* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    const float* lse);
void exp_minus_rows(double* s, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                    const double* lse);

// x[r][c] *= factor[r]
void scale_rows(float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                const float* factor);
void scale_rows(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                const double* factor);

// x[r][c] += value
void add_constant(float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols, float value);
void add_constant(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols, double value);

// The sum of every x[r][c], row by row.
float sum(const float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols);
double sum(const double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols);

// x[r][c] *= factor
void scale(float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols, float factor);
void scale(double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols, double factor);

// x[r][c] *= y[r][c]
void multiply(float* x, std::int64_t ldx, const float* y, std::int64_t ldy, std::int64_t rows,
              std::int64_t cols);
void multiply(double* x, std::int64_t ldx, const double* y, std::int64_t ldy, std::int64_t rows,
              std::int64_t cols);

// x[r][c] += y[r][c]
void add(float* x, std::int64_t ldx, const float* y, std::int64_t ldy, std::int64_t rows,
         std::int64_t cols);
void add(double* x, std::int64_t ldx, const double* y, std::int64_t ldy, std::int64_t rows,
         std::int64_t cols);

// The softmax backward: dp[r][c] = p[r][c] * (dp[r][c] - row_dot[r]) * mult.
void softmax_grad(double* dp, std::int64_t lddp, const double* p, std::int64_t ldp,
                  std::int64_t rows, std::int64_t cols, const double* row_dot, double mult);
void softmax_grad(float* dp, std::int64_t lddp, const float* p, std::int64_t ldp, std::int64_t rows,
                  std::int64_t cols, const float* row_dot, float mult);

// sums[c] += sum over r of x[r][c]
void add_column_sums(const float* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                     float* sums);
void add_column_sums(const double* x, std::int64_t ldx, std::int64_t rows, std::int64_t cols,
                     double* sums);

// The layer's bias table over a tile of relation ids (-1 = no bias): forward adds
// table[id[r][c]] to s[r][c], backward adds ds[r][c] into dtable[id[r][c]]. Ids come in runs
// (a section pair, a distance bucket), so both work run by run: one table access per run
// and a vector loop over it, instead of a gather or a scatter-add per element whose
// read-modify-write chain through one table entry serialises.
void add_table_bias(float* s, std::int64_t lds, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, const float* table);
void add_table_bias(double* s, std::int64_t lds, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, const double* table);
void add_table_grad(const float* ds, std::int64_t ldd, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, float* dtable);
void add_table_grad(const double* ds, std::int64_t ldd, const std::int32_t* id, std::int64_t ldi,
                    std::int64_t rows, std::int64_t cols, double* dtable);

// Gumbel(0, 1) noise -log(-log(u)) with u = counter_uniform_at(row, n) (counter_random.h),
// for the keys n0 .. n0 + count of one attention row (row = counter_row(seed,
// RandomStream::Gumbel, b, h, i)), added to x. The logs are a Cephes-style polynomial (within
// about 2 ulp of std::log), so the loop vectorises; the noise is float whatever T is, and
// every kernel draws it through these functions, so they agree to the bit.
void add_gumbel(float* x, std::uint64_t row, std::int64_t n0, std::int64_t count);
void add_gumbel(double* x, std::uint64_t row, std::int64_t n0, std::int64_t count);
// One value of the same noise.
float gumbel_at(std::uint64_t row, std::int64_t n);

// Attention dropout over the keys n0 .. n0 + count of one row (row = counter_row(seed,
// RandomStream::Dropout, b, h, i)): f[c] times `kept` where counter_keep keeps the pair, 0
// where it drops it; first_kept = first_kept_draw(rate) (counter_random.h).
void apply_dropout(float* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                   std::int32_t first_kept, float kept);
void apply_dropout(double* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                   std::int32_t first_kept, double kept);
// The factors alone: f[c] = `kept` or 0 by the same rule (what apply_dropout multiplies by).
void dropout_factors(float* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                     std::int32_t first_kept, float kept);
void dropout_factors(double* f, std::uint64_t row, std::int64_t n0, std::int64_t count,
                     std::int32_t first_kept, double kept);

// sum over c of x[c] * y[c]
float dot(const float* x, const float* y, std::int64_t n);
double dot(const double* x, const double* y, std::int64_t n);

}  // namespace strata::attn::tiles
