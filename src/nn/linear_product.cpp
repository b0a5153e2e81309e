#include "strata/nn/linear_product.h"

#include <torch/torch.h>

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "strata/attn/tile_gemm.h"
#include "strata/attn/transpose.h"
#include "strata/attn/balanced_for.h"

namespace strata::nn {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What runs fp32 products of kMinRows rows or more. The AVX-512 micro-kernel where it runs:
// the AVX2 one ran these layers no faster than OpenBLAS (AVX2 too, and packed), 0.90-1.02x on
// Zen 3 (`strata bench linear`), where the attention's tiles, a BLAS call each, gain 1.2x.
// STRATA_LINEAR=libtorch in the environment (read once) hands them to torch::linear.
enum class Products { MicroKernel, Blas, Libtorch };

Products chosen_products() {
  static const Products chosen = [] {
    const char* choice = std::getenv("STRATA_LINEAR");
    if (choice && std::string_view(choice) == "libtorch") return Products::Libtorch;
    return attn::cpu_micro_kernel() == attn::MicroKernel::Avx512 ? Products::MicroKernel : Products::Blas;
  }();
  return chosen;
}

// The product goes part by part so that what the micro-kernel re-reads stays in L2: a part of
// at most kRowChunk rows of C (or of kBandChunk bands of 64 columns, every row) at a depth of
// kDepthChunk (op(A)'s part, 96 x 256 floats = 96 KB, read once per band of 64 columns; B's
// band, 256 x 64 floats = 64 KB, read once per 6 rows). Depth chunks after the first add to C,
// always in depth order, so every element's sum is the same however rows and columns are
// shared out.
constexpr std::int64_t kRowChunk = 96;
constexpr std::int64_t kDepthChunk = 256;
constexpr std::int64_t kRowBlock = 6;  // the micro-kernel's rows a pass
constexpr std::int64_t kBand = 64;     // and its columns
constexpr std::int64_t kBandChunk = 2;

// The part of op(a) at row i0, depth p0.
const float* a_at(bool trans_a, const float* a, std::int64_t lda, std::int64_t i0, std::int64_t p0) {
  return trans_a ? a + p0 * lda + i0 : a + i0 * lda + p0;
}

// c [i0, i0 + rows) x [j0, j0 + cols) of op(a) b, depth chunk by depth chunk, then the bias.
void product_part(bool trans_a, std::int64_t i0, std::int64_t rows, std::int64_t j0, std::int64_t cols, std::int64_t n,
                  std::int64_t depth, const float* a, std::int64_t lda, const float* b, float* c, const float* bias) {
  for (std::int64_t p0 = 0; p0 < depth; p0 += kDepthChunk)
    attn::tile_gemm_micro(attn::MicroKernel::Avx512, trans_a, rows, cols, std::min(kDepthChunk, depth - p0), 1.0f, a_at(trans_a, a, lda, i0, p0),
                           lda, b + p0 * n + j0, n, p0 == 0 ? 0.0f : 1.0f, c + i0 * n + j0, n);
  if (bias != nullptr)
    for (std::int64_t r = i0; r < i0 + rows; ++r)
      for (std::int64_t j = j0; j < j0 + cols; ++j) c[r * n + j] += bias[j];
}

// c [m, n] = op(a) b (+ bias [n] on every row, when given), op(a) = a [m, depth] or, with
// trans_a, the transpose of a [depth, m] (lda its row stride); b [depth, n] contiguous. The
// bias is added to a part while it is still in cache, after its last depth chunk: the same
// sums, rounded the same way, as adding it afterwards, without another pass over C.
//
// The threads share out rows of C, or, when C is wider than tall, its 64-column bands: each
// part a thread takes reads all of the other side, B for a part of rows, op(A) for a part of
// columns, so the split is along the side whose other operand is the smaller. (Rows only, the
// weight gradient of the 1,024 -> 256 layer, dW [256, 1,024] over 4,096 rows, re-read its 16
// MB of activations for each of a dozen claims: 146 GFLOP/s on 1 thread, 224 on 2; the
// vocabulary projection's forward re-read 8 MB of Wᵀ against a 512 KB x.)
// Parts go out through balanced_for: each thread starts on an equal share and runs it up to a
// chunk at a time; a thread done early takes parts from the end of the other's share, so a
// core running slower does not hold the other up. (Handing out whole chunks from one counter
// left a thread idle: 256 rows are 3 chunks, 2 on one thread and 1 on the other. Items of 6
// rows x 64 columns, to make the last claims shorter still, cut the threads' end waits by a
// third but ran no faster: a narrow piece of a weight gradient re-reads its rows of dy and x
// for 64 columns.)
void product(bool trans_a, std::int64_t m, std::int64_t n, std::int64_t depth, const float* a, std::int64_t lda,
             const float* b, float* c, const float* bias = nullptr) {
  if (n > m) {
    const std::int64_t bands = (n + kBand - 1) / kBand;
    attn::balanced_for(bands, kBandChunk, [&](std::int64_t first, std::int64_t last) {
      const std::int64_t j0 = first * kBand;
      product_part(trans_a, 0, m, j0, std::min(n, last * kBand) - j0, n, depth, a, lda, b, c, bias);
    });
    return;
  }
  const std::int64_t blocks = (m + kRowBlock - 1) / kRowBlock;
  attn::balanced_for(blocks, kRowChunk / kRowBlock, [&](std::int64_t first, std::int64_t last) {
    const std::int64_t i0 = first * kRowBlock;
    product_part(trans_a, i0, std::min(m, last * kRowBlock) - i0, 0, n, n, depth, a, lda, b, c, bias);
  });
}

// wᵀ of a [rows, cols] fp32 matrix, contiguous: 64 x 64 tiles at a time (strata/attn/transpose.h),
// shared out by balanced_for. (libtorch's copy of a transposed view reads a column at a time,
// over one fixed split of the threads: the forward's B, packed every call, was 0.8 % of a
// training step's samples that way.)
at::Tensor transposed(const at::Tensor& matrix) {
  const at::Tensor w = matrix.contiguous();
  const std::int64_t rows = w.size(0), cols = w.size(1);
  at::Tensor t = at::empty({cols, rows}, w.options());
  const float* from = w.data_ptr<float>();
  float* to = t.data_ptr<float>();
  constexpr std::int64_t kTile = 64;
  const std::int64_t col_tiles = (cols + kTile - 1) / kTile, tiles = (rows + kTile - 1) / kTile * col_tiles;
  attn::balanced_for(tiles, 4, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t tile = first; tile < last; ++tile) {
      const std::int64_t r0 = tile / col_tiles * kTile, c0 = tile % col_tiles * kTile;
      attn::transpose(from + r0 * cols + c0, cols, std::min(kTile, rows - r0), std::min(kTile, cols - c0),
                      to + c0 * rows + r0, rows);
    }
  });
  return t;
}

// The micro-kernel's products: W is transposed once a call into the row-major B it reads.
struct MicroKernelProducts {
  static void forward(const at::Tensor& rows, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& y) {
    const std::int64_t in = weight.size(1), out = weight.size(0);
    const at::Tensor weight_t = transposed(weight);
    product(false, rows.size(0), out, in, rows.data_ptr<float>(), in, weight_t.data_ptr<float>(), y.data_ptr<float>(),
            bias.numel() > 0 ? bias.data_ptr<float>() : nullptr);
  }

  // dx [m, in] = dy [m, out] · W [out, in]; dW [out, in] = dyᵀ [out, m] · x [m, in]; db [out],
  // dy's column sums. Any may be undefined: not wanted.
  static void backward(const at::Tensor& dy, const at::Tensor& rows, const at::Tensor& weight, at::Tensor& dx,
                       at::Tensor& dw, at::Tensor& db) {
    const std::int64_t m = rows.size(0), in = weight.size(1), out = weight.size(0);
    if (dx.defined()) product(false, m, in, out, dy.data_ptr<float>(), out, weight.data_ptr<float>(), dx.data_ptr<float>());
    if (dw.defined()) product(true, out, in, m, dy.data_ptr<float>(), out, rows.data_ptr<float>(), dw.data_ptr<float>());
    if (db.defined()) db.copy_(dy.sum(0));
  }
};

// Whether sgemm called inside an OpenMP parallel region runs on the calling thread alone:
// OpenBLAS built for OpenMP (Debian's libopenblas0-openmp, which scripts/install-deps installs)
// or a BLAS without threads. A pthreads OpenBLAS would start threads of its own under each of ours.
bool blas_serial_in_parallel_region() {
  static const bool serial = [] {
    using Query = int (*)();
    const auto parallel = reinterpret_cast<Query>(::dlsym(RTLD_DEFAULT, "openblas_get_parallel"));
    return parallel == nullptr || parallel() != 1;  // 0: no threads, 1: pthreads, 2: OpenMP
  }();
  return serial;
}

// BLAS sgemm's products (OpenBLAS at run time), for CPUs without the AVX-512 micro-kernel.
// What they save over torch::linear, which libtorch 1.13 runs as matmul, then a new tensor for
// the bias added (`strata bench linear` has the ratio):
// - the forward writes the bias into y and has sgemm add x Wᵀ to it (beta = 1): OpenBLAS
//   clears C in a pass of its own when beta = 0, and the bias then took another pass;
// - the backward's two products, the same number of flops each, run side by side, each thread
//   its own share of them on one thread of sgemm, instead of one after the other on every
//   thread, each with its own split and end wait.
struct BlasProducts {
  static void sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                    const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c) {
    if (m == 0) return;
    cblas_sgemm(CblasRowMajor, trans_a, trans_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(n));
  }

  static void forward(const at::Tensor& rows, const at::Tensor& weight, const at::Tensor& bias, at::Tensor& y) {
    const std::int64_t m = rows.size(0), in = weight.size(1), out = weight.size(0);
    float* c = y.data_ptr<float>();
    const bool has_bias = bias.numel() > 0;
    if (has_bias) {
      const float* b = bias.data_ptr<float>();
      at::parallel_for(0, m, std::max<std::int64_t>(1, 16384 / std::max<std::int64_t>(out, 1)),
                       [&](std::int64_t first, std::int64_t last) {
                         for (std::int64_t r = first; r < last; ++r) std::copy(b, b + out, c + r * out);
                       });
    }
    sgemm(CblasNoTrans, CblasTrans, m, out, in, rows.data_ptr<float>(), in, weight.data_ptr<float>(), in,
          has_bias ? 1.0f : 0.0f, c);
  }

  // The bias gradient is summed in the same parallel region, each thread over its share of dy's
  // rows, soon after the products read dy (libtorch's sum over rows, a pass of its own after
  // them, was 1.1 % of a training step's samples).
  static void backward(const at::Tensor& dy, const at::Tensor& rows, const at::Tensor& weight, at::Tensor& dx,
                       at::Tensor& dw, at::Tensor& db) {
    const std::int64_t m = rows.size(0), in = weight.size(1), out = weight.size(0);
    const float* g = dy.data_ptr<float>();
    // dx's rows [first, last) and dW's.
    auto dx_rows = [&](std::int64_t first, std::int64_t last) {
      sgemm(CblasNoTrans, CblasNoTrans, last - first, in, out, g + first * out, out, weight.data_ptr<float>(), in, 0.0f,
            dx.data_ptr<float>() + first * in);
    };
    auto dw_rows = [&](std::int64_t first, std::int64_t last) {
      sgemm(CblasTrans, CblasNoTrans, last - first, in, m, g + first, out, rows.data_ptr<float>(), in, 0.0f,
            dw.data_ptr<float>() + first * in);
    };
    const std::int64_t threads =
        at::in_parallel_region() || !blas_serial_in_parallel_region() ? 1 : at::get_num_threads();
    if (!dx.defined() || !dw.defined() || threads == 1) {
      if (dx.defined()) dx_rows(0, m);
      if (dw.defined()) dw_rows(0, out);
      if (db.defined()) db.copy_(dy.sum(0));
      return;
    }
    // Thread t's column sums of dy's rows [t m / threads, (t + 1) m / threads), added in thread
    // order after the region.
    std::vector<float> partial(db.defined() ? static_cast<std::size_t>(threads * out) : 0, 0.0f);
    // The two products as one range of 2 x threads equal parts, dx's first: thread t takes
    // parts [2t, 2t + 2), so with an odd thread count one thread does a part of each. Inside
    // the parallel region sgemm runs on the calling thread alone.
    // Where part boundary p falls in the product of `size` rows whose parts start at `offset`.
    auto part = [&](std::int64_t offset, std::int64_t size, std::int64_t p) {
      return std::clamp<std::int64_t>(p - offset, 0, threads) * size / threads;
    };
    at::parallel_for(0, threads, 1, [&](std::int64_t first, std::int64_t last) {
      for (std::int64_t t = first; t < last; ++t) {
        dx_rows(part(0, m, 2 * t), part(0, m, 2 * t + 2));
        dw_rows(part(threads, out, 2 * t), part(threads, out, 2 * t + 2));
        if (db.defined()) column_sums(g, out, t * m / threads, (t + 1) * m / threads, partial.data() + t * out);
      }
    });
    if (!db.defined()) return;
    float* sums = db.data_ptr<float>();
    std::copy_n(partial.data(), out, sums);
    for (std::int64_t t = 1; t < threads; ++t)
      for (std::int64_t j = 0; j < out; ++j) sums[j] += partial[static_cast<std::size_t>(t * out + j)];
  }

  // sums [cols] += the rows [first, last) of a [*, cols] matrix.
  static void column_sums(const float* matrix, std::int64_t cols, std::int64_t first, std::int64_t last, float* sums) {
    for (std::int64_t r = first; r < last; ++r)
      for (std::int64_t j = 0; j < cols; ++j) sums[j] += matrix[r * cols + j];
  }
};

template <class Products>
class LinearFunction : public torch::autograd::Function<LinearFunction<Products>> {
 public:
  // x Wᵀ + bias; a layer without one passes an empty bias (libtorch 1.13's Function takes no
  // undefined input).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias) {
    const std::int64_t in = weight.size(1), out = weight.size(0);
    const at::Tensor rows = x.reshape({-1, in}).contiguous();
    at::Tensor y = at::empty({rows.size(0), out}, x.options());
    Products::forward(rows, weight.contiguous(), bias.contiguous(), y);
    ctx->save_for_backward({rows, weight});
    ctx->saved_data["bias"] = bias.numel() > 0;
    std::vector<std::int64_t> shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& rows = saved[0];
    const at::Tensor weight = saved[1].contiguous();
    const std::int64_t m = rows.size(0), in = weight.size(1), out = weight.size(0);
    if (!grads[0].defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const at::Tensor dy = grads[0].reshape({m, out}).contiguous();
    at::Tensor dx = ctx->needs_input_grad(0) ? at::empty({m, in}, rows.options()) : at::Tensor();
    at::Tensor dw = ctx->needs_input_grad(1) ? at::empty({out, in}, weight.options()) : at::Tensor();
    at::Tensor db = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2) ? at::empty({out}, weight.options())
                                                                                  : at::Tensor();
    Products::backward(dy, rows, weight, dx, dw, db);
    if (dx.defined()) {
      std::vector<std::int64_t> shape = grads[0].sizes().vec();
      shape.back() = in;
      dx = dx.view(shape);
    }
    return {dx, dw, db};
  }
};

}  // namespace

at::Tensor linear_product(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool fp32 = x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
                    (!bias.defined() || bias.scalar_type() == at::kFloat);
  const bool cpu = x.device().is_cpu() && weight.device().is_cpu();
  if (!fp32 || !cpu || x.dim() == 0 || x.size(-1) != weight.size(1) || x.numel() < kMinRows * weight.size(1))
    return torch::nn::functional::linear(x, weight, bias);
  const at::Tensor b = bias.defined() ? bias : at::empty({0}, weight.options());
  switch (chosen_products()) {
    case Products::MicroKernel: return LinearFunction<MicroKernelProducts>::apply(x, weight, b);
    case Products::Blas: return LinearFunction<BlasProducts>::apply(x, weight, b);
    case Products::Libtorch: break;
  }
  return torch::nn::functional::linear(x, weight, bias);
}

const char* linear_products() {
  switch (chosen_products()) {
    case Products::MicroKernel: return attn::micro_kernel_name(attn::MicroKernel::Avx512);
    case Products::Blas: return "blas sgemm";
    case Products::Libtorch: break;
  }
  return "libtorch";
}

}  // namespace strata::nn
