#pragma once
// Dropout whose mask is drawn in parallel: element e of a call is kept when its counter-based
// draw (attn/counter_random.h, keyed by one 64-bit seed the call takes from libtorch's default
// generator) passes, and kept elements are scaled by 1 / (1 - p). A seeded run repeats, on any
// thread count. libtorch's own CPU dropout (bernoulli_ without MKL) draws every element from the
// one generator on one thread, which in bench_training's model was a tenth of a step's time with
// the other core idle. In fp32 the mask is never stored: forward scales x in one pass and
// backward draws the same mask again for the gradient.
#include <ATen/core/Tensor.h>

namespace strata::nn {

// x itself when !training or p <= 0; zeros when p >= 1.
at::Tensor dropout(const at::Tensor& x, double p, bool training);

// dropout(gelu(x), p, training) (GELU's erf form), with the same mask under the same seed; in
// training on fp32 CPU tensors one pass forward and one backward, GELU's erf by Abramowitz and
// Stegun 7.1.26 (within 1.5e-7 of erf, as libtorch's vectorised GELU).
at::Tensor gelu_dropout(const at::Tensor& x, double p, bool training);

}  // namespace strata::nn
