#pragma once
// The fused kernel's passes over raw buffers (the autograd wrapper in fused.cpp owns the
// tensors). Instantiated for float and double.
#include "fused_plan.h"

namespace strata::attn {

// Forward. Writes out [B, H, Lq, D] (zero-initialised by the caller) and the log-sum-exp of
// each query row's normalised scores, lse [B, H, Lq] (+inf for a row that sees nothing).
// Top-p heads also get keep [B, H, N] (1 for a kept key, 0 otherwise), which backward reads
// back; keep may be null when no head truncates.
template <class T>
void fused_forward(const FusedPlan& plan, const FusedInputs<T>& in, T* out, T* lse, T* keep);

// Gradients to accumulate into; null for the ones not wanted. dq, dk, dv are shaped like q,
// k, v; dtable like the table [H, R]; ddense is [B, H, Lq, N] whatever the dense bias
// broadcasts over (the caller sums it down). All zero-initialised by the caller.
template <class T>
struct FusedGrads {
  T* dq = nullptr;
  T* dk = nullptr;
  T* dv = nullptr;
  T* dtable = nullptr;
  T* ddense = nullptr;
};

// Backward from dout [B, H, Lq, D], recomputing the weights from the saved lse (and keep).
template <class T>
void fused_backward(const FusedPlan& plan, const FusedInputs<T>& in, const T* out, const T* lse,
                    const T* keep, const T* dout, const FusedGrads<T>& grads);

}  // namespace strata::attn
