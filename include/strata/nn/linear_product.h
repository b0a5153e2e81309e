#pragma once
// A linear layer's product, y = x Wᵀ + b, forward and backward, for fp32 CPU tensors of at
// least kMinRows rows:
// - on a CPU with AVX-512F, strata's register-blocked micro-kernel (strata/attn/tile_gemm.h).
//   Why: libtorch hands these products to OpenBLAS, whose kernel under this project's
//   OPENBLAS_CORETYPE=Haswell is AVX2 only, and they are most of a training step. Each output
//   element is summed in the same order (depth chunk by depth chunk) whichever thread computes
//   it, so the result does not depend on the thread count; the threads share out chunks of
//   rows, or of 64-column bands when the product is wider than tall (balanced_for).
// - elsewhere, BLAS sgemm called directly: the bias written first and added to (no separate
//   pass for it), and the backward's two products side by side (linear_product.cpp says why).
// fp64, another device, a decoding step's few rows, or STRATA_LINEAR=libtorch in the
// environment (read once) run torch::linear.
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::nn {

// Rows (the product of x's leading dimensions) below which torch::linear runs: a decoding
// step would spend more on repacking W than on the product.
inline constexpr std::int64_t kMinRows = 16;

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out], differentiable in all three.
at::Tensor linear_product(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// What runs fp32 products of kMinRows rows or more on this CPU, for benchmarks to print:
// "avx512 micro-kernel", "blas sgemm" or "libtorch".
const char* linear_products();

}  // namespace strata::nn
