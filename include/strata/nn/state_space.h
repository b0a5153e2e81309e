#pragma once
// State-space sequence mixing (thesis ch. 5, Eqs. 5.1–5.4): each channel of the input is
// convolved causally with a kernel as long as the sequence, by FFT in O(L log L). Two kernels,
// both generated for any length (which is what lets a model run past its training length):
//   - S4D: the diagonal SSM x_k = A x_{k-1} + B u_k, y_k = C x_k discretised by zero-order hold,
//     K_l = 2 Re sum_n C~_n exp(dt A_n l) with C~ = C (exp(dt A) - 1) / A (B folded into C);
//   - unstructured (Eq. 5.4): K_t = exp(-alpha t) FFN(PosEnc(t)), Hyena's filter without its
//     gating, t in [0, 1] spanning the training length.
// A kernel has `outputs` filters over the same input (the Block-State Transformer's MH and MF
// context states); StateSpace adds the skip term D u.
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>

namespace strata::nn {

// y[..., c, t] = sum_{s <= t} k[c, s] u[..., c, t - s] for u [..., C, L] and k [C, L] (any
// leading dims of k broadcast against u's). Padded to 2L: an FFT of length L would convolve
// circularly and leak the future into the past. At long lengths the channels go a group at a
// time, made again in backward (nn/recompute.h): memory for their transforms stays ~32 MiB.
at::Tensor causal_fft_conv(const at::Tensor& u, const at::Tensor& k);

struct StateSpaceOptions {
  std::string kernel = "s4d";       // "s4d" or "unstructured"
  std::int64_t channels = 64;       // C: the input's channels, one kernel each
  std::int64_t outputs = 1;         // filters over the same input (MH: one per head; MF: S)
  std::int64_t states = 16;         // S4D: N, as N / 2 complex-conjugate modes
  double dt_min = 1e-3, dt_max = 1e-1;  // S4D: the range log dt is drawn from
  std::int64_t filter_length = 1024;    // unstructured: the positions t in [0, 1] spans
  std::int64_t filter_order = 64;       // unstructured: the filter MLP's width
  std::int64_t filter_bands = 4;        // unstructured: sine/cosine pairs of PosEnc(t)
};

// The S4D kernel. Parameters: log_dt [C]; A = -exp(log_a_real) + i a_imag, [C, N/2] each
// (initialised S4D-Lin: A_re = 1/2, A_im = pi n); c [outputs, C, N/2, 2], C as (re, im).
class S4dKernelImpl : public torch::nn::Module {
 public:
  explicit S4dKernelImpl(const StateSpaceOptions& options);
  at::Tensor forward(std::int64_t length);  // [outputs, C, length]
  // Decoding by the recurrence: u [B, C, T] are the inputs after those `state` summarises
  // (undefined before the first call; then [B, C, N/2] complex, updated) -> y [B, O, C, T]
  // without the skip term, equal to the kernel's convolution over the whole sequence. O(T C N)
  // a call, however long the sequence so far.
  at::Tensor step(const at::Tensor& u, at::Tensor& state);

  // dt A [C, N/2] and C~ = C (exp(dt A) - 1) / A [O, C, N/2], both complex.
  struct Discretised {
    at::Tensor dt_a, c_tilde;
  };
  Discretised discretised() const;

  at::Tensor log_dt, log_a_real, a_imag, c;

 private:
  StateSpaceOptions options_;
};
TORCH_MODULE(S4dKernel);

// The unstructured kernel: PosEnc(t) = [t, cos(2 pi f t L'), sin(2 pi f t L')] over
// filter_bands frequencies f, an MLP with sine activations of trainable frequency, a bias-free
// output layer to outputs * C values, times exp(-|alpha_c| t) with decays spaced linearly from
// log(1e-2) / 1.5 to log(1e-2) / 0.3 over the channels (slow to fast), each filter divided by the
// L1 norm of its first filter_length taps (Hyena's normalisation, over the training length).
class UnstructuredKernelImpl : public torch::nn::Module {
 public:
  explicit UnstructuredKernelImpl(const StateSpaceOptions& options);
  at::Tensor forward(std::int64_t length);  // [outputs, C, length]

  at::Tensor in_weight, in_bias, hidden_weight, hidden_bias, out_weight;  // the MLP
  at::Tensor frequency;  // [order]: the sine activations' frequency, trainable
  at::Tensor decay;      // [C], fixed

 private:
  StateSpaceOptions options_;
};
TORCH_MODULE(UnstructuredKernel);

// u [B, C, L] -> y [B, outputs, C, L] = K * u + D u, causal: y at t reads u at t and before.
class StateSpaceImpl : public torch::nn::Module {
 public:
  explicit StateSpaceImpl(const StateSpaceOptions& options);
  at::Tensor forward(const at::Tensor& u);
  // Decoding: u [B, C, T], the inputs after those `state` summarises (undefined before the
  // first call) -> their outputs [B, outputs, C, T], as forward() over the whole sequence
  // would give them. S4D runs its recurrence; the unstructured kernel, which has none, keeps
  // every input and convolves them all again (O(L log L) a call).
  at::Tensor step(const at::Tensor& u, at::Tensor& state);
  at::Tensor kernel(std::int64_t length);  // [outputs, C, length]

  S4dKernel s4d{nullptr};                  // one of the two
  UnstructuredKernel unstructured{nullptr};
  at::Tensor skip;                         // D [outputs, C]

  const StateSpaceOptions& options() const { return options_; }

 private:
  void check_input(const at::Tensor& u) const;

  StateSpaceOptions options_;
};
TORCH_MODULE(StateSpace);

// Whether a parameter's name is one of the SSM's own (S4D's log_dt, log_a_real, a_imag):
// they train without weight decay, in their own optimiser group.
bool is_state_space_dynamics(const std::string& name);

}  // namespace strata::nn
