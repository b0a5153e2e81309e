#pragma once
// Dropout's and GELU-then-dropout's element loops over fp32 ranges, forward and backward, for
// dropout.cpp's autograd nodes: torch-free, in a file of their own so that they can be built
// without trapping math (CMakeLists.txt says why). The mask is drawn from a counter-based
// stream (strata/attn/counter_random.h), never stored: backward draws it again.
#include <cstdint>

#include "strata/attn/counter_random.h"

namespace strata::nn {

// One call's mask: element `at` is kept, scaled by 1 / (1 - p), where its draw from `row`
// passes, and dropped elsewhere.
struct MaskRule {
  MaskRule(std::uint64_t row, double p)
      : row(row), first_kept(attn::first_kept_draw(p)), kept(static_cast<float>(1.0 / (1.0 - p))) {}
  std::uint64_t row;
  std::int32_t first_kept;
  float kept;
};

// out[e] = in[e] * factor(first + e), e < count: the forward on x and, with the same mask,
// the backward on the output's gradient.
void scale_kept(const float* in, float* out, std::int64_t first, std::int64_t count, MaskRule mask);

// out[e] = gelu(x[e]) * factor(first + e) (GELU's erf form).
void gelu_kept(const float* x, float* out, std::int64_t first, std::int64_t count, MaskRule mask);

// Its gradient: dx[e] = dy[e] * factor(first + e) * gelu'(x[e]).
void gelu_kept_grad(const float* x, const float* dy, float* dx, std::int64_t first, std::int64_t count,
                    MaskRule mask);

}  // namespace strata::nn
