#pragma once
// AdamW's arithmetic on a stretch of one fp32 parameter, for AdamW::step's single pass over all
// parameters. A file of its own, without libtorch: it is compiled with -fno-math-errno (GCC
// does not vectorise sqrtf that may set errno).
#include <cstdint>

namespace strata::train {

// One update's scalars, in float as libtorch's per-tensor ops use them.
struct AdamWScalars {
  float beta1, gain1;  // beta1, 1 - beta1
  float beta2, gain2;  // beta2, 1 - beta2
  float root_bc2;      // sqrt(1 - beta2^t)
  float eps;
  float step;  // -lr / (1 - beta1^t)
};

// p, its first and second moments m and v updated in place over `count` elements, in the
// order of the per-tensor ops (the AVX copies may fuse a multiply and an add, so sums can
// round differently in the last bit). `decay`: 1 - lr * weight_decay, or 1 without decay.
void adamw_update(float* p, const float* g, float* m, float* v, std::int64_t count, AdamWScalars s, float decay);

}  // namespace strata::train
