// The fused kernel's tile products against a plain fp64 triple loop, over the shapes whose
// edges the micro-kernels handle apart: row blocks of 6 and their remainders, column bands of
// 64 (AVX-512) or 16 (AVX2) and masked last vectors, depth 0 and depths deep enough that the AVX2
// kernel copies B's bands, A transposed, padded leading dimensions, beta 0 / 1 / ½;
// and the block transpose the kernel's K^T and V^T copies use, over its 16 x 16 blocks' edges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "strata/attn/tile_gemm.h"
#include "strata/attn/transpose.h"

namespace strata::attn {
namespace {

struct Shape {
  bool trans_a;
  std::int64_t m, n, k;
  float alpha, beta;
};

std::vector<Shape> shapes() {
  std::vector<Shape> list;
  for (bool trans_a : {false, true})
    for (std::int64_t m : {1, 5, 6, 7, 13, 64, 65})
      for (std::int64_t n : {1, 15, 16, 17, 48, 64, 65, 130})
        for (std::int64_t k : {0, 1, 7, 64, 256})
          list.push_back({trans_a, m, n, k, k == 7 ? 0.125f : 1.0f, n % 2 ? 1.0f : (m % 2 ? 0.0f : 0.5f)});
  return list;
}

using Product = bool (*)(bool, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                         std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);

// Runs `product` on one shape with padded buffers; C must match fp64 and the padding right
// of each row must come back untouched.
void check(const Shape& s, Product product, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  const std::int64_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
  const std::int64_t lda = a_cols + 3, ldb = s.n + 5, ldc = s.n + 2;
  std::vector<float> a(static_cast<std::size_t>(std::max<std::int64_t>(a_rows, 1) * lda));
  std::vector<float> b(static_cast<std::size_t>(std::max<std::int64_t>(s.k, 1) * ldb));
  std::vector<float> c(static_cast<std::size_t>(s.m * ldc));
  for (float& x : a) x = normal(rng);
  for (float& x : b) x = normal(rng);
  for (float& x : c) x = normal(rng);
  const float pad = -7.25f;
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = s.n; j < ldc; ++j) c[i * ldc + j] = pad;
  std::vector<float> before = c;
  // beta 0 must not read C: NaN there must not reach the result.
  if (s.beta == 0.0f)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) c[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();

  ASSERT_TRUE(product(s.trans_a, s.m, s.n, s.k, s.alpha, a.data(), lda, b.data(), ldb, s.beta,
                      c.data(), ldc));
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double want = 0;
      for (std::int64_t p = 0; p < s.k; ++p) {
        const float a_ip = s.trans_a ? a[p * lda + i] : a[i * lda + p];
        want += static_cast<double>(a_ip) * b[p * ldb + j];
      }
      want = s.alpha * want + (s.beta == 0.0f ? 0.0 : s.beta * static_cast<double>(before[i * ldc + j]));
      ASSERT_NEAR(c[i * ldc + j], want, 1e-4 * (1.0 + std::fabs(want)))
          << "trans_a " << s.trans_a << " m " << s.m << " n " << s.n << " k " << s.k << " at (" << i
          << ", " << j << ")";
    }
    for (std::int64_t j = s.n; j < ldc; ++j)
      ASSERT_EQ(c[i * ldc + j], pad) << "wrote past column n: m " << s.m << " n " << s.n;
  }
}

bool dispatched(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                float* c, std::int64_t ldc) {
  gemm(trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  return true;
}

TEST(TileGemm, DispatchedProductMatchesFp64) {
  std::mt19937 rng(11);
  for (const Shape& s : shapes()) check(s, dispatched, rng);
}

// Each micro-kernel this CPU runs, called directly (an AVX-512 CPU runs both).
template <MicroKernel Kernel>
bool micro(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  return tile_gemm_micro(Kernel, trans_a, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

template <MicroKernel Kernel>
void check_micro_kernel(unsigned seed) {
  float probe = 0;
  if (!tile_gemm_micro(Kernel, false, 1, 1, 1, 1.0f, &probe, 1, &probe, 1, 0.0f, &probe, 1))
    GTEST_SKIP() << "this CPU does not run the " << micro_kernel_name(Kernel);
  std::mt19937 rng(seed);
  for (const Shape& s : shapes()) check(s, micro<Kernel>, rng);
}

TEST(TileGemm, Avx512MicroKernelMatchesFp64) { check_micro_kernel<MicroKernel::Avx512>(12); }

TEST(TileGemm, Avx2MicroKernelMatchesFp64) { check_micro_kernel<MicroKernel::Avx2>(13); }

TEST(TileGemm, NoMicroKernelComputesNothing) {
  float c = 3;
  EXPECT_FALSE(tile_gemm_micro(MicroKernel::None, false, 1, 1, 1, 1.0f, &c, 1, &c, 1, 0.0f, &c, 1));
  EXPECT_EQ(c, 3);
}

TEST(TileGemm, Fp64IsBlas) {
  const double a[] = {1, 2, 3, 4, 5, 6};  // 2 x 3
  const double b[] = {1, 0, 0, 1, 1, 1};  // 3 x 2
  double c[] = {10, 10, 10, 10};
  gemm(false, 2, 2, 3, 2.0, a, 3, b, 2, 1.0, c, 2);
  EXPECT_DOUBLE_EQ(c[0], 10 + 2 * (1 + 3));
  EXPECT_DOUBLE_EQ(c[1], 10 + 2 * (2 + 3));
  EXPECT_DOUBLE_EQ(c[2], 10 + 2 * (4 + 6));
  EXPECT_DOUBLE_EQ(c[3], 10 + 2 * (5 + 6));
}

// Every element lands where the plain definition puts it, for blocks whole and cut on either
// side, with padded leading dimensions whose padding must come back untouched.
TEST(Transpose, MatchesTheDefinitionOnEveryEdge) {
  for (std::int64_t rows : {1, 5, 15, 16, 17, 33, 64})
    for (std::int64_t cols : {1, 7, 16, 18, 31, 64, 70}) {
      const std::int64_t lds = cols + 3, ldd = rows + 2;
      std::vector<float> src(static_cast<std::size_t>(rows * lds)), dst(static_cast<std::size_t>(cols * ldd), -1.5f);
      for (std::size_t e = 0; e < src.size(); ++e) src[e] = static_cast<float>(e);
      std::vector<double> src64(src.begin(), src.end()), dst64(dst.begin(), dst.end());
      transpose(src.data(), lds, rows, cols, dst.data(), ldd);
      transpose(src64.data(), lds, rows, cols, dst64.data(), ldd);
      for (std::int64_t c = 0; c < cols; ++c)
        for (std::int64_t r = 0; r < ldd; ++r) {
          const float want = r < rows ? src[r * lds + c] : -1.5f;
          ASSERT_EQ(dst[c * ldd + r], want) << rows << " x " << cols << " at (" << r << ", " << c << ")";
          ASSERT_EQ(dst64[c * ldd + r], want) << "fp64, " << rows << " x " << cols;
        }
    }
}

}  // namespace
}  // namespace strata::attn
