// strata's linear product (nn/linear_product.h) against torch::linear computed in fp64: values
// and the three gradients, with and without bias, frozen inputs, and the paths that hand the
// product to libtorch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string_view>

#include "strata/attn/tile_gemm.h"
#include "strata/nn/linear_product.h"

namespace strata::nn {
namespace {

struct Grads {
  at::Tensor y, dx, dw, db;
};

// y and the gradients of sum(y * g) for a fixed g, by `f` on leaves copied from x, w, b.
template <class F>
Grads run(F f, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& g) {
  at::Tensor xl = x.detach().clone().requires_grad_(true), wl = w.detach().clone().requires_grad_(true);
  at::Tensor bl = b.defined() ? b.detach().clone().requires_grad_(true) : at::Tensor();
  const at::Tensor y = f(xl, wl, bl);
  (y * g.to(y.scalar_type())).sum().backward();
  return {y.detach(), xl.grad(), wl.grad(), bl.defined() ? bl.grad() : at::Tensor()};
}

void expect_near(const at::Tensor& actual, const at::Tensor& expected, const char* what) {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const double error = (actual.to(at::kDouble) - expected).abs().max().item<double>();
  const double scale = expected.abs().max().item<double>();
  EXPECT_LE(error, 2e-5 * (1 + scale)) << what;
}

// Rows, columns and depth that are no multiple of the micro-kernel's 6 x 64 block; then more
// rows than a row chunk (96) and more depth than a depth chunk (256), forward and for dW.
// Products wider than tall go by columns: the first shape's forward (39 x 131), the second's
// dx (300 x 520) and dW (70 x 520, over 300 rows).
void expect_every_shape_matches_fp64() {
  struct Shape {
    std::vector<std::int64_t> x;
    std::int64_t out;
  };
  for (const Shape& shape : {Shape{{3, 13, 70}, 131}, Shape{{300, 520}, 70}}) {
    for (const bool bias : {true, false}) {
      const at::Tensor x = torch::randn(shape.x), w = torch::randn({shape.out, shape.x.back()}) * 0.1;
      const at::Tensor b = bias ? torch::randn({shape.out}) : at::Tensor();
      std::vector<std::int64_t> y_shape = shape.x;
      y_shape.back() = shape.out;
      const at::Tensor g = torch::randn(y_shape);
      const Grads ours = run(linear_product, x, w, b, g);
      const Grads exact = run([](const at::Tensor& xx, const at::Tensor& ww, const at::Tensor& bb) {
        return torch::nn::functional::linear(xx, ww, bb);
      }, x.to(at::kDouble), w.to(at::kDouble), b.defined() ? b.to(at::kDouble) : b, g.to(at::kDouble));
      EXPECT_EQ(ours.y.sizes(), at::IntArrayRef(y_shape));
      expect_near(ours.y, exact.y, "y");
      expect_near(ours.dx, exact.dx, "dx");
      expect_near(ours.dw, exact.dw, "dw");
      if (bias) expect_near(ours.db, exact.db, "db");
    }
  }
}

// On 1, 2 and 3 threads: BLAS's backward shares its two products out as 2 x threads parts, and
// on 3 the middle thread takes a part of each.
TEST(LinearProduct, MatchesTorchLinearInFp64WithEveryGradient) {
  if (std::string_view(linear_products()) == "libtorch") GTEST_SKIP() << "linear_product is torch::linear on this CPU";
  torch::manual_seed(3);
  const int threads = at::get_num_threads();
  for (const int thread_count : {1, 2, 3}) {
    SCOPED_TRACE(thread_count);
    at::set_num_threads(thread_count);
    expect_every_shape_matches_fp64();
  }
  at::set_num_threads(threads);
}

TEST(LinearProduct, FrozenInputsGetNoGradient) {
  const at::Tensor x = torch::randn({40, 24});
  const at::Tensor w = torch::randn({10, 24}).requires_grad_(true);
  linear_product(x, w, at::Tensor()).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_FALSE(x.grad().defined());

  const at::Tensor frozen = torch::randn({10, 24});
  const at::Tensor xg = torch::randn({40, 24}).requires_grad_(true);
  linear_product(xg, frozen, torch::zeros({10})).sum().backward();
  ASSERT_TRUE(xg.grad().defined());
  EXPECT_FALSE(frozen.grad().defined());
}

// On 2 threads rows (or, for dW [200, 300], 64-column bands) go in claims that halve as a
// share runs out and in stolen ranges; on 1 thread in chunks of 96 rows (128 columns): values
// and every gradient the same to the bit. A promise of strata's own product only: where it
// hands the product to BLAS or libtorch, OpenBLAS splits the work by thread count and the sums
// differ.
TEST(LinearProduct, TheResultDoesNotDependOnTheThreadCount) {
  if (std::string_view(linear_products()) != attn::micro_kernel_name(attn::MicroKernel::Avx512))
    GTEST_SKIP() << "linear_product runs " << linear_products() << " on this CPU, not strata's micro-kernel";
  const at::Tensor x = torch::randn({301, 300}), w = torch::randn({200, 300}), b = torch::randn({200});
  const at::Tensor g = torch::randn({301, 200});
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const Grads one = run(linear_product, x, w, b, g);
  at::set_num_threads(2);
  const Grads two = run(linear_product, x, w, b, g);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one.y, two.y));
  EXPECT_TRUE(torch::equal(one.dx, two.dx));
  EXPECT_TRUE(torch::equal(one.dw, two.dw));
  EXPECT_TRUE(torch::equal(one.db, two.db));
}

TEST(LinearProduct, FewRowsAndFp64AreTorchsOwnProduct) {
  const at::Tensor w = torch::randn({9, 20}), b = torch::randn({9});
  const at::Tensor few = torch::randn({kMinRows - 1, 20});
  EXPECT_TRUE(torch::equal(linear_product(few, w, b), torch::nn::functional::linear(few, w, b)));
  const at::Tensor wide = torch::randn({64, 20}, at::kDouble);
  EXPECT_TRUE(torch::equal(linear_product(wide, w.to(at::kDouble), b.to(at::kDouble)),
                           torch::nn::functional::linear(wide, w.to(at::kDouble), b.to(at::kDouble))));
}

TEST(LinearProduct, AMismatchedDepthIsTorchsError) {
  EXPECT_THROW(linear_product(torch::randn({32, 7}), torch::randn({4, 8}), at::Tensor()), c10::Error);
}

}  // namespace
}  // namespace strata::nn
