#pragma once
// A linear layer's product, y = x Wᵀ + b, forward and backward, by strata's register-blocked
// AVX-512 micro-kernel (strata/attn/tile_gemm.h) where it runs: fp32 CPU tensors on a CPU with
// AVX-512F, at least kMinRows rows. Elsewhere (fp64, another device, a decoding step's few
// rows, no AVX-512, or STRATA_LINEAR=libtorch in the environment, read once) it is
// torch::linear. Why: libtorch hands these products to OpenBLAS, whose kernel under this
// project's OPENBLAS_CORETYPE=Haswell is AVX2 only, and they are most of a training step.
//
// Each output element is summed in the same order (depth chunk by depth chunk) whichever thread
// computes it, so the result does not depend on the thread count; the threads share out
// chunks of rows, or of 64-column bands when the product is wider than tall (balanced_for).
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::nn {

// Rows (the product of x's leading dimensions) below which torch::linear runs: a decoding
// step would spend more on repacking W than on the product.
inline constexpr std::int64_t kMinRows = 16;

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out], differentiable in all three.
at::Tensor linear_product(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// What runs fp32 products of kMinRows rows or more on this CPU, for benchmarks to print:
// "avx512 micro-kernel" or "libtorch".
const char* linear_products();

}  // namespace strata::nn
