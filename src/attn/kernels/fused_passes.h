#pragma once
// The fused kernel's passes over raw buffers (the autograd wrapper in fused.cpp owns the
// tensors). Instantiated for float and double.
#include "fused_plan.h"

namespace strata::attn {

// Forward. Writes every row of out [B, H, Lq, D] (uninitialised) and the log-sum-exp of
// each query row's normalised scores, lse [B, H, Lq] (+inf for a row that sees nothing).
// Top-p heads also get keep [B, H, N] (1 for a kept key, 0 otherwise), which backward reads
// back; keep may be null when no head truncates.
template <class T>
void fused_forward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<T>& out, T* lse,
                   T* keep);

// Gradients; null for the ones not wanted. dq, dk, dv are shaped like q, k, v, each dense
// (its elements fill one block of memory, in any order of dimensions), and written whole:
// the caller leaves them uninitialised. dtable like the table [H, R] and ddense [B, H, Lq, N]
// whatever the dense bias broadcasts over (the caller sums it down) are added to, so the
// caller zeroes them.
template <class T>
struct FusedGrads {
  HeadRows<T> dq, dk, dv;
  T* dtable = nullptr;
  T* ddense = nullptr;
};

// Backward from dout [B, H, Lq, D], recomputing the weights from the saved lse (and keep).
template <class T>
void fused_backward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<const T>& out,
                    const T* lse, const T* keep, const HeadRows<const T>& dout, const FusedGrads<T>& grads);

}  // namespace strata::attn
