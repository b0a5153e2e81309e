// The fused kernel's vectorised tile loops against plain scalar arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "random_calls.h"
#include "strata/attn/counter_random.h"
#include "attn/kernels/fused_plan.h"
#include "attn/kernels/fused_tiles.h"
#include "attn/kernels/softmax_rows.h"

namespace strata::attn::tiles {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(FusedTiles, ExpMatchesLibmToAboutOneUlp) {
  // A dense sweep of the whole normal range, at odd lengths so the vector tails run too.
  std::vector<float> x;
  for (double t = -87.0; t <= 88.0; t += 0.000731) x.push_back(static_cast<float>(t));
  std::vector<float> y = x;
  exp_inplace(y.data(), static_cast<std::int64_t>(y.size()));
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(y[i] - exact) / exact);
  }
  EXPECT_LT(worst, 2.5e-7);  // float epsilon is 1.19e-7
}

TEST(FusedTiles, ExpOfHiddenScoresIsExactlyZero) {
  std::vector<float> x = {-kInf, -1e30f, -90.0f, -87.5f, 0.0f, -0.0f, 1.0f};
  exp_inplace(x.data(), static_cast<std::int64_t>(x.size()));
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[3], 0.0f);
  EXPECT_EQ(x[4], 1.0f);
  EXPECT_EQ(x[5], 1.0f);
  EXPECT_NEAR(x[6], std::exp(1.0f), 3e-7f);
}

// Two online steps over the halves of each row give the softmax of the whole row.
TEST(FusedTiles, OnlineSoftmaxOverTwoTilesEqualsOneSoftmax) {
  const std::int64_t rows = 5, cols = 37, ld = 40;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> scores(rows * ld);
  for (float& s : scores) s = normal(rng);
  for (std::int64_t c = 0; c < cols; ++c) scores[4 * ld + c] = -kInf;  // a row that sees nothing
  scores[1 * ld + 3] = -kInf;
  std::vector<float> first(scores), second(scores);
  std::vector<float> max(rows, -kInf), sum(rows, 0.0f), rescale(rows);
  const std::int64_t half = 19;
  online_softmax(first.data(), ld, rows, half, max.data(), sum.data(), rescale.data());
  online_softmax(second.data() + half, ld, rows, cols - half, max.data(), sum.data(),
                 rescale.data());
  for (std::int64_t r = 0; r < rows; ++r) {
    double row_max = -kInf, total = 0;
    for (std::int64_t c = 0; c < cols; ++c) row_max = std::max<double>(row_max, scores[r * ld + c]);
    if (r == 4) {
      EXPECT_EQ(sum[r], 0.0f);
      for (std::int64_t c = 0; c < cols; ++c)
        EXPECT_EQ((c < half ? first : second)[r * ld + c], 0.0f);
      continue;
    }
    for (std::int64_t c = 0; c < cols; ++c) total += std::exp(scores[r * ld + c] - row_max);
    EXPECT_FLOAT_EQ(max[r], static_cast<float>(row_max));
    EXPECT_NEAR(sum[r], total, 1e-5 * total);
    // The first tile's weights, rescaled, and the second's, divided by the sum: softmax.
    for (std::int64_t c = 0; c < cols; ++c) {
      const float w = c < half ? first[r * ld + c] * rescale[r] : second[r * ld + c];
      EXPECT_NEAR(w / sum[r], std::exp(scores[r * ld + c] - row_max) / total, 1e-6);
    }
  }
}

TEST(FusedTiles, SoftmaxGradAndColumnSums) {
  const std::int64_t rows = 3, cols = 11, ld = 16;
  std::vector<double> p(rows * ld), dp(rows * ld), sums(cols, 1.0);
  for (std::int64_t i = 0; i < rows * ld; ++i) p[i] = 0.01 * i, dp[i] = 0.5 - 0.02 * i;
  const std::vector<double> dp_in = dp, row_dot = {0.1, -0.2, 0.3};
  softmax_grad(dp.data(), ld, p.data(), ld, rows, cols, row_dot.data(), 2.0);
  add_column_sums(p.data(), ld, rows, cols, sums.data());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      EXPECT_DOUBLE_EQ(dp[r * ld + c], p[r * ld + c] * (dp_in[r * ld + c] - row_dot[r]) * 2.0);
  for (std::int64_t c = 0; c < cols; ++c)
    EXPECT_DOUBLE_EQ(sums[c], 1.0 + p[c] + p[ld + c] + p[2 * ld + c]);
}

// Rows of scores from several tiles: the exact max first, then exp and sums (top-p's first
// step), against plain arithmetic; a row that sees nothing stays zeros.
TEST(FusedTiles, MaxThenExpShiftSumRows) {
  const std::int64_t rows = 3, cols = 13, ld = 16;
  std::vector<float> s(rows * ld);
  for (std::int64_t i = 0; i < rows * ld; ++i) s[i] = 0.37f * static_cast<float>(i % 11) - 2.0f;
  for (std::int64_t c = 0; c < cols; ++c) s[2 * ld + c] = -kInf;
  const std::vector<float> in = s;
  std::vector<float> max(rows, -kInf), sum(rows, 1.0f);
  max_rows(s.data(), ld, rows, cols, max.data());
  exp_shift_sum_rows(s.data(), ld, rows, cols, max.data(), sum.data());
  for (std::int64_t r = 0; r < 2; ++r) {
    float expected_max = -kInf, total = 1.0f;
    for (std::int64_t c = 0; c < cols; ++c) expected_max = std::max(expected_max, in[r * ld + c]);
    EXPECT_EQ(max[r], expected_max);
    for (std::int64_t c = 0; c < cols; ++c) {
      const float e = std::exp(in[r * ld + c] - expected_max);
      EXPECT_NEAR(s[r * ld + c], e, 3e-7f * e);
      total += e;
    }
    EXPECT_NEAR(sum[r], total, 1e-5f);
  }
  EXPECT_EQ(max[2], -kInf);
  EXPECT_EQ(sum[2], 1.0f);
  for (std::int64_t c = 0; c < cols; ++c) EXPECT_EQ(s[2 * ld + c], 0.0f);
}

// The rows the softmax uses where the CPU has them, against libm and the plain loop: the same
// relative error bound over the whole normal range, exactly 0 below log(FLT_MIN) and for -inf,
// NaN kept, and every row length from 0 to 40 (whole vectors and masked tails).
void check_rows_match_the_plain_loops(const SimdRows* rows, const char* needs) {
  if (rows == nullptr) GTEST_SKIP() << "this CPU has no " << needs;
  const SimdRows& simd = *rows;
  std::vector<float> x;
  for (double t = -87.0; t <= 88.0; t += 0.000731) x.push_back(static_cast<float>(t));
  std::vector<float> y = x;
  simd.exp_shifted(y.data(), static_cast<std::int64_t>(y.size()), 0.0f);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::abs(y[i] - exact) / exact);
  }
  EXPECT_LT(worst, 2.5e-7);

  std::vector<float> edge = {-kInf, -1e30f, -90.0f, -87.5f, 0.0f, -0.0f, 1.0f,
                             std::numeric_limits<float>::quiet_NaN()};
  simd.exp_shifted(edge.data(), static_cast<std::int64_t>(edge.size()), 0.0f);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(edge[i], 0.0f) << i;
  EXPECT_EQ(edge[4], 1.0f);
  EXPECT_EQ(edge[5], 1.0f);
  EXPECT_NEAR(edge[6], std::exp(1.0f), 3e-7f);
  EXPECT_TRUE(std::isnan(edge[7]));

  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  for (std::int64_t n = 0; n <= 40; ++n) {
    std::vector<float> row(static_cast<std::size_t>(n) + 1);
    for (float& v : row) v = normal(rng);
    if (n > 3) row[2] = -kInf;
    const float sentinel = row[n];  // one past the row: must stay untouched
    float expected_max = -kInf;
    for (std::int64_t c = 0; c < n; ++c) expected_max = std::max(expected_max, row[c]);
    EXPECT_EQ(simd.row_max(row.data(), n), expected_max) << n;
    std::vector<float> plain(row.begin(), row.begin() + n);
    for (float& v : plain) v -= expected_max;
    exp_inplace(plain.data(), n);
    float plain_sum = 0;
    for (float v : plain) plain_sum += v;
    const float sum = simd.exp_shifted_sum(row.data(), n, n ? expected_max : 0.0f);
    for (std::int64_t c = 0; c < n; ++c) EXPECT_NEAR(row[c], plain[c], 2.5e-7f * plain[c] + 1e-30f) << n;
    EXPECT_NEAR(sum, plain_sum, 1e-6f * (plain_sum + 1)) << n;
    EXPECT_EQ(row[n], sentinel) << n;
  }
  const float all_hidden[3] = {-kInf, -kInf, -kInf};
  EXPECT_EQ(simd.row_max(all_hidden, 3), -kInf);
}

TEST(FusedTiles, Avx512RowsMatchThePlainLoops) { check_rows_match_the_plain_loops(avx512_rows(), "AVX-512F"); }

TEST(FusedTiles, Avx2RowsMatchThePlainLoops) { check_rows_match_the_plain_loops(avx2_rows(), "AVX2 and FMA"); }

// The kernels' Gumbel noise: counter_gumbel's (std::log) within float rounding, the same
// value vectorised and one at a time, and finite for every u, the top cell included.
TEST(FusedTiles, GumbelNoiseMatchesCounterGumbel) {
  const std::uint64_t seed = 77;
  for (std::int64_t i = 0; i < 4; ++i) {
    const std::uint64_t row = counter_row(seed, RandomStream::Gumbel, 1, 2, i);
    std::vector<float> noise(1000, 0.0f);
    std::vector<double> wide(noise.size(), 0.0);
    add_gumbel(noise.data(), row, 5, static_cast<std::int64_t>(noise.size()));
    add_gumbel(wide.data(), row, 5, static_cast<std::int64_t>(wide.size()));
    for (std::size_t c = 0; c < noise.size(); ++c) {
      const std::int64_t n = 5 + static_cast<std::int64_t>(c);
      const float exact = counter_gumbel(seed, 1, 2, i, n);
      EXPECT_NEAR(noise[c], exact, 1e-6f * std::max(1.0f, std::abs(exact))) << n;
      EXPECT_EQ(noise[c], gumbel_at(row, n));
      EXPECT_EQ(wide[c], static_cast<double>(noise[c]));
    }
  }
  // The top cell of the 24-bit uniform: u would round to 1 and the noise to +inf.
  const std::uint64_t row = counter_row(seed, RandomStream::Gumbel, 0, 0, 0);
  std::int64_t top = 0;
  while (counter_draw_at(row, top) != (1 << 24) - 1) ++top;
  EXPECT_LT(counter_uniform_at(row, top), 1.0f);
  EXPECT_TRUE(std::isfinite(counter_gumbel(seed, 0, 0, 0, top)));
  EXPECT_TRUE(std::isfinite(gumbel_at(row, top)));
  EXPECT_GT(gumbel_at(row, top), 15.0f);  // -log(-log(1 - 2^-24)) = 16.6
}

// Dropout by integer draws keeps exactly the pairs counter_keep keeps, at any rate, the
// rates whose threshold falls between two float cells included.
TEST(FusedTiles, DropoutByIntegerDrawsKeepsWhatCounterKeepKeeps) {
  const std::uint64_t seed = 91;
  for (const double rate : {0.0, 1e-9, 0.1, 1.0 / 3.0, 0.5, 0.9, 1.0 - 1e-9, 1.0}) {
    const std::int32_t first = first_kept_draw(rate);
    const float kept = rate < 1 ? static_cast<float>(1.0 / (1.0 - rate)) : 0.0f;
    for (std::int64_t i = 0; i < 3; ++i) {
      const std::uint64_t row = counter_row(seed, RandomStream::Dropout, 0, 1, i);
      std::vector<float> f(997, 2.0f);
      std::vector<double> wide(f.size(), 2.0);
      apply_dropout(f.data(), row, 11, static_cast<std::int64_t>(f.size()), first, kept);
      apply_dropout(wide.data(), row, 11, static_cast<std::int64_t>(wide.size()), first, double{kept});
      std::int64_t kept_count = 0;
      for (std::size_t c = 0; c < f.size(); ++c) {
        const bool keep = counter_keep(seed, rate, 0, 1, i, 11 + static_cast<std::int64_t>(c));
        ASSERT_EQ(f[c], keep ? 2.0f * kept : 0.0f) << "rate " << rate << " key " << c;
        ASSERT_EQ(wide[c], keep ? 2.0 * double{kept} : 0.0);
        kept_count += keep;
      }
      if (rate == 0.0) {
        EXPECT_EQ(kept_count, 997);
      } else if (rate == 1.0) {
        EXPECT_EQ(kept_count, 0);
      } else if (rate == 0.5) {
        EXPECT_NEAR(kept_count, 498, 60);
      }
    }
  }
  // Around a threshold: the draw before the first kept one falls below the rate.
  const std::int32_t first = first_kept_draw(0.25);
  EXPECT_GE(counter_uniform_of_bits(static_cast<std::uint32_t>(first)), 0.25f);
  EXPECT_LT(counter_uniform_of_bits(static_cast<std::uint32_t>(first - 1)), 0.25f);
}

// The 24-bit draws of neighbouring keys and neighbouring rows, over 64 x 4,096 (row, key)
// pairs: each of 16 buckets of the draw holds its share (chi-square, 15 degrees of freedom,
// p < 0.001 above 37.7), and a key below the median is as often followed by one below it, in the
// next key and in the next row, as chance says (1/4; the standard error is 0.002). Keys past 2^32
// are drawn apart from those 2^32 below them.
TEST(FusedTiles, CounterDrawsAreUniformAndUnrelatedBetweenNeighbours) {
  constexpr std::int64_t kRows = 64, kKeys = 4096, kHalf = 1 << 23;
  std::vector<std::int64_t> buckets(16, 0);
  std::int64_t both_next_key = 0, both_next_row = 0;
  for (std::int64_t i = 0; i < kRows; ++i) {
    const std::uint64_t row = counter_row(7, RandomStream::Dropout, 0, 3, i);
    const std::uint64_t next_row = counter_row(7, RandomStream::Dropout, 0, 3, i + 1);
    for (std::int64_t n = 0; n < kKeys; ++n) {
      const std::int32_t draw = counter_draw_at(row, n);
      ASSERT_GE(draw, 0);
      ASSERT_LT(draw, 1 << 24);
      ++buckets[static_cast<std::size_t>(draw >> 20)];
      both_next_key += draw < kHalf && counter_draw_at(row, n + 1) < kHalf;
      both_next_row += draw < kHalf && counter_draw_at(next_row, n) < kHalf;
    }
  }
  const double expected = kRows * kKeys / 16.0;
  double chi_square = 0;
  for (const std::int64_t count : buckets) chi_square += (count - expected) * (count - expected) / expected;
  EXPECT_LT(chi_square, 37.7);
  EXPECT_NEAR(both_next_key / double(kRows * kKeys), 0.25, 0.01);
  EXPECT_NEAR(both_next_row / double(kRows * kKeys), 0.25, 0.01);
  const std::uint64_t row = counter_row(7, RandomStream::Dropout, 0, 0, 0);
  std::int64_t same = 0;
  for (std::int64_t n = 0; n < 1000; ++n) same += counter_draw_at(row, n) == counter_draw_at(row, n + (std::int64_t{1} << 32));
  EXPECT_LT(same, 5);
}

// into_rows() writes rows no product reached (whatever they held: NaN here) and adds to the
// others, in at most two products for two runs, and marks every row written.
TEST(FusedTiles, IntoRowsWritesFreshRowsAndAddsToWrittenOnes) {
  const std::int64_t d = 3, ld = 5;
  const std::vector<std::vector<std::uint8_t>> patterns = {
      {0, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 0, 0, 0}, {0, 1, 1}, {1, 0, 1, 1}, {0, 1, 0, 1, 0}};
  for (const auto& pattern : patterns) {
    const auto count = static_cast<std::int64_t>(pattern.size());
    std::vector<float> rows(count * ld, std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t r = 0; r < count; ++r)
      if (pattern[r]) std::fill_n(rows.begin() + r * ld, d, 10.0f * r);
    std::vector<std::uint8_t> written = pattern;
    int products = 0;
    into_rows(rows.data(), ld, d, written.data(), count, [&](std::int64_t m0, std::int64_t m1, float beta) {
      ++products;
      for (std::int64_t r = m0; r < m1; ++r)
        for (std::int64_t c = 0; c < d; ++c) {
          float& x = rows[r * ld + c];
          x = (beta == 0 ? 0.0f : beta * x) + 1.0f + c;  // a product with this beta
        }
    });
    const auto runs = 1 + std::inner_product(pattern.begin() + 1, pattern.end(), pattern.begin(), 0,
                                             std::plus<>(), std::not_equal_to<>());
    EXPECT_EQ(products, runs <= 2 ? runs : 1);
    for (std::int64_t r = 0; r < count; ++r) {
      EXPECT_EQ(written[r], 1);
      for (std::int64_t c = 0; c < d; ++c) EXPECT_EQ(rows[r * ld + c], (pattern[r] ? 10.0f * r : 0.0f) + 1.0f + c);
      for (std::int64_t c = d; c < ld && r + 1 < count; ++c) EXPECT_TRUE(std::isnan(rows[r * ld + c]));
    }
  }
}

TEST(FusedTiles, AddConstantAndSumOverATileWithALeadingDimension) {
  std::vector<float> x(3 * 21, 1.0f);  // 3 rows of 19 columns, leading dimension 21
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t c = 0; c < 19; ++c) x[r * 21 + c] = static_cast<float>(r * 19 + c);
  add_constant(x.data(), 21, 3, 19, 0.5f);
  EXPECT_FLOAT_EQ(x[0], 0.5f);
  EXPECT_FLOAT_EQ(x[2 * 21 + 18], 56.5f);
  EXPECT_FLOAT_EQ(x[19], 1.0f);  // the padding stays
  // sum over 57 values 0.5 .. 56.5, padding excluded
  EXPECT_FLOAT_EQ(sum(x.data(), 21, 3, 19), 57 * 28.5f);
}

// strips_of() covers each row's run with a strip of that row (strips in row order, 16-column
// vectors saving a fifth at least), or gives one whole strip, or none when no row sees a key.
TEST(FusedTiles, StripsCoverEveryRowsRun) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t rows = test::uniform(rng, 1, 40), cols = test::uniform(rng, 1, 70);
    std::vector<std::int64_t> first(rows), last(rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      first[r] = test::uniform(rng, 0, cols);
      last[r] = test::coin(rng, 0.2) ? first[r] : test::uniform(rng, first[r], cols);
    }
    std::vector<Strip> strips(strips_per_tile(rows));
    strips.resize(strips_of(first.data(), last.data(), rows, cols, strips.data()));
    const bool any = std::any_of(first.begin(), first.end(), [&, r = 0](std::int64_t f) mutable { return f < last[r++]; });
    ASSERT_EQ(strips.empty(), !any) << "trial " << trial;
    for (std::int64_t r = 0; r < rows; ++r) {
      if (first[r] == last[r]) continue;
      const auto covers = [&](const Strip& s) {
        return s.r0 <= r && r < s.r0 + s.rows && s.lo <= first[r] && last[r] <= s.lo + s.cols;
      };
      ASSERT_TRUE(std::any_of(strips.begin(), strips.end(), covers)) << "trial " << trial << " row " << r;
    }
    if (strips.size() == 1 && strips[0].rows == rows && strips[0].cols == cols) continue;  // whole
    std::int64_t vectors = 0;
    for (const Strip& s : strips) vectors += s.rows * ((s.cols + 15) / 16);
    EXPECT_LT(5 * vectors, 4 * rows * ((cols + 15) / 16)) << "trial " << trial;
  }
}

// The plan's edge tiles are, for every batch item and head of a group, the runs row_runs()
// gives that item and head, and the strips of them; tiles where it declines are not kept.
TEST(FusedTiles, EdgeTilesAreEveryItemsAndHeadsRowRuns) {
  std::mt19937 rng(9);
  int kept = 0, left = 0;
  for (int trial = 0; trial < 150; ++trial) {
    const auto r = test::random_call(rng, {.max_batch = 3, .max_len = 60});
    PairRules rules(r->call);
    BlockMask mask = compile_block_mask(rules, test::uniform(rng, 1, 20), test::uniform(rng, 1, 20));
    const FusedPlan plan(std::move(rules), std::move(mask), r->call);
    const BlockMask& m = plan.mask;
    std::vector<std::int64_t> first(m.q_tile), last(m.q_tile);
    std::vector<Strip> strips(strips_per_tile(m.q_tile));
    for (std::int64_t b = 0; b < plan.batch; ++b)
      for (std::int64_t h = 0; h < plan.heads; ++h) {
        if (plan.head[h].fixed()) continue;
        for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {
          const std::int64_t row = plan.mask_row(b, h, qt), i0 = m.q_begin(qt), rows = m.q_rows(qt);
          for (std::int64_t e = m.row_begin[row]; e < m.row_begin[row + 1]; ++e) {
            const std::int64_t n0 = m.k_begin(m.tile[e]), cols = m.k_cols(m.tile[e]);
            const auto edge = plan.edges.find(m, b, plan.head[h].group, qt, e);
            const bool runs =
                !m.full[e] && plan.rules.row_runs(b, h, i0, i0 + rows, n0, n0 + cols, first.data(), last.data());
            const std::string where = "trial " + std::to_string(trial) + " b " + std::to_string(b) + " h " +
                                      std::to_string(h) + " qt " + std::to_string(qt) + " e " + std::to_string(e);
            ASSERT_EQ(edge.has_value(), runs) << where;
            if (!runs) {
              left += !m.full[e];
              continue;
            }
            ++kept;
            EXPECT_EQ(std::vector<std::int64_t>(edge->first, edge->first + rows),
                      std::vector<std::int64_t>(first.begin(), first.begin() + rows)) << where;
            EXPECT_EQ(std::vector<std::int64_t>(edge->last, edge->last + rows),
                      std::vector<std::int64_t>(last.begin(), last.begin() + rows)) << where;
            const std::int64_t count = strips_of(first.data(), last.data(), rows, cols, strips.data());
            ASSERT_EQ(static_cast<std::int64_t>(edge->strips.size()), count) << where;
            for (std::int64_t k = 0; k < count; ++k) {
              const Strip &a = edge->strips[k], &want = strips[k];
              EXPECT_TRUE(a.r0 == want.r0 && a.rows == want.rows && a.lo == want.lo && a.cols == want.cols) << where;
            }
          }
        }
      }
  }
  EXPECT_GT(kept, 100);
  EXPECT_GT(left, 100);
}

}  // namespace
}  // namespace strata::attn::tiles
