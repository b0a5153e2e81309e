#include "strata/nn/state_space.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "strata/core/error.h"
#include "strata/nn/recompute.h"

namespace strata::nn {

namespace {

at::Tensor fft_conv(const at::Tensor& u, const at::Tensor& k) {
  const std::int64_t length = u.size(-1), n = 2 * length;  // linear, not circular: no wrap-around from the end
  const at::Tensor product = torch::fft::rfft(u, n, -1) * torch::fft::rfft(k, n, -1);
  return torch::fft::irfft(product, n, -1).narrow(-1, 0, length);
}

// Channels convolved at once: their transforms (2L points each, a few copies, and as many again
// in backward) stay near 32 MiB at any length; at training lengths that is every channel.
std::int64_t channels_at_once(std::int64_t length) { return std::max<std::int64_t>(1, (std::int64_t{1} << 20) / length); }

}  // namespace

at::Tensor causal_fft_conv(const at::Tensor& u, const at::Tensor& k) {
  const std::int64_t length = u.size(-1);
  if (k.size(-1) != length)
    throw Error("causal_fft_conv: the kernel has " + std::to_string(k.size(-1)) + " positions, the input " +
                std::to_string(length));
  if (u.dim() < 2 || k.dim() < 2 || k.size(-2) != u.size(-2) || u.size(-2) <= channels_at_once(length))
    return fft_conv(u, k);
  // Channel groups one after another, each made again in backward (nn/recompute.h), so that
  // neither pass holds every channel's transforms.
  const auto conv = [](const std::vector<at::Tensor>& in, std::int64_t, std::int64_t) { return fft_conv(in[0], in[1]); };
  const std::int64_t out_dims = std::max(u.dim(), k.dim());
  return recompute_by_span(conv, {{u, u.dim() - 2}, {k, k.dim() - 2}}, u.size(-2), channels_at_once(length),
                           out_dims - 2, {});
}

namespace {

void check_options(const StateSpaceOptions& o) {
  if (o.channels <= 0 || o.outputs <= 0)
    throw Error("state space: channels and outputs must be positive, got " + std::to_string(o.channels) + " and " +
                std::to_string(o.outputs));
  if (o.kernel == "s4d" && (o.states < 2 || o.states % 2 != 0))
    throw Error("model.bst_states: S4D needs an even number of states N >= 2 (N / 2 complex modes), got " +
                std::to_string(o.states));
  if (o.kernel == "unstructured" && (o.filter_length < 2 || o.filter_order <= 0 || o.filter_bands <= 0))
    throw Error("model.bst_filter_length: the unstructured filter needs a training length >= 2, got " +
                std::to_string(o.filter_length));
}

}  // namespace

S4dKernelImpl::S4dKernelImpl(const StateSpaceOptions& options) : options_(options) {
  check_options(options);
  const std::int64_t modes = options.states / 2;
  const double lo = std::log(options.dt_min), hi = std::log(options.dt_max);
  log_dt = register_parameter("log_dt", torch::rand({options.channels}) * (hi - lo) + lo);
  log_a_real = register_parameter("log_a_real", torch::full({options.channels, modes}, std::log(0.5)));
  a_imag = register_parameter(
      "a_imag", (std::numbers::pi * torch::arange(modes, torch::kFloat)).expand({options.channels, modes}).clone());
  // C drawn complex normal (variance 1 over the real and imaginary parts together).
  c = register_parameter("c", torch::randn({options.outputs, options.channels, modes, 2}) * std::sqrt(0.5));
}

S4dKernelImpl::Discretised S4dKernelImpl::discretised() const {
  const at::Tensor a = torch::complex(-torch::exp(log_a_real), a_imag);  // [C, N/2]
  const at::Tensor dt_a = a * torch::exp(log_dt).unsqueeze(-1);
  // Zero-order hold: C~ = C (exp(dt A) - 1) / A.
  return {dt_a, torch::view_as_complex(c.contiguous()) * ((torch::exp(dt_a) - 1) / a)};  // [O, C, N/2]
}

namespace {

// exp(dt A l) for l = start .. end - 1: [C, N/2, end - start].
at::Tensor powers(const at::Tensor& dt_a, std::int64_t start, std::int64_t end) {
  const auto real = torch::TensorOptions().dtype(c10::toRealValueType(dt_a.scalar_type()));
  return torch::exp(dt_a.unsqueeze(-1) * torch::arange(start, end, real));
}

// K_l = 2 Re sum_n C~_n exp(dt A_n l) for l = start .. end - 1: [C, O, N/2] x [C, N/2, T] -> [O, C, T].
at::Tensor kernel_of(const at::Tensor& dt_a, const at::Tensor& c_tilde, std::int64_t start, std::int64_t end) {
  return 2 * torch::real(torch::matmul(c_tilde.transpose(0, 1), powers(dt_a, start, end))).transpose(0, 1);
}

// Positions of the kernel made at once. The powers are C N/2 L complex numbers (1 GiB at 64
// channels, 16 states and 256k positions), so a longer kernel is made span by span and, when
// trained, made again span by span in backward (nn/recompute.h).
constexpr std::int64_t kKernelSpan = 8192;

}  // namespace

at::Tensor S4dKernelImpl::forward(std::int64_t length) {
  const Discretised d = discretised();
  if (length <= kKernelSpan) return kernel_of(d.dt_a, d.c_tilde, 0, length);
  const auto span = [](const std::vector<at::Tensor>& in, std::int64_t start, std::int64_t end) {
    return kernel_of(in[0], in[1], start, end);
  };
  return recompute_by_span(span, {{d.dt_a}, {d.c_tilde}}, length, kKernelSpan, 2, {});
}

at::Tensor S4dKernelImpl::step(const at::Tensor& u, at::Tensor& state) {
  // With x_t = sum_{j <= t} exp(dt A (t - j)) u_j, y_t = 2 Re sum_n C~_n x_{t,n}. The new
  // positions t0 + r read the state before them through exp(dt A (r + 1)) and each other
  // through the kernel's first T taps; the state moves on by exp(dt A T).
  const Discretised d = discretised();
  const std::int64_t length = u.size(-1);
  at::Tensor y = causal_fft_conv(u.unsqueeze(1), kernel_of(d.dt_a, d.c_tilde, 0, length));  // [B, O, C, T]
  const at::Tensor p = powers(d.dt_a, 0, length + 1);                                       // [C, N/2, T + 1]
  const at::Tensor inputs = u.to(d.dt_a.scalar_type());
  const at::Tensor added = torch::einsum("bct,cnt->bcn", {inputs, p.narrow(-1, 0, length).flip(-1)});
  if (!state.defined()) {
    state = added;
    return y;
  }
  y = y + 2 * torch::real(torch::einsum("bcn,ocn,cnt->boct", {state, d.c_tilde, p.narrow(-1, 1, length)}));
  state = state * p.select(-1, length) + added;
  return y;
}

// PyTorch's default Linear initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)). The filter's
// maps are plain parameters rather than Linear modules so that a model's init_weights (normal
// 0.02 on every Linear) leaves the sine MLP in its working range.
namespace {
at::Tensor uniform_init(at::IntArrayRef shape, std::int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::rand(shape) * (2 * bound) - bound;
}
}  // namespace

UnstructuredKernelImpl::UnstructuredKernelImpl(const StateSpaceOptions& options) : options_(options) {
  check_options(options);
  const std::int64_t features = 1 + 2 * options.filter_bands, order = options.filter_order;
  in_weight = register_parameter("in_weight", uniform_init({order, features}, features));
  in_bias = register_parameter("in_bias", uniform_init({order}, features));
  hidden_weight = register_parameter("hidden_weight", uniform_init({order, order}, order));
  hidden_bias = register_parameter("hidden_bias", uniform_init({order}, order));
  out_weight = register_parameter("out_weight", uniform_init({options.outputs * options.channels, order}, order));
  frequency = register_parameter("frequency", torch::ones({options.filter_order}));
  // Slow decays on the first channels, fast on the last (Hyena's ExponentialModulation).
  const double slow = std::log(1e-2) / 1.5, fast = std::log(1e-2) / 0.3;
  decay = register_buffer("decay", torch::linspace(slow, fast, options.channels).abs());
}

at::Tensor UnstructuredKernelImpl::forward(std::int64_t length) {
  // The taps are made at least as far as the training length: they are normalised there.
  const std::int64_t trained = options_.filter_length, made = std::max(length, trained);
  const double span = static_cast<double>(trained - 1);
  const auto real = in_weight.options().requires_grad(false);
  const at::Tensor l = torch::arange(made, real).unsqueeze(-1);              // [L, 1]
  const at::Tensor t = l / span;                                             // 1 at the training length
  const at::Tensor bands = torch::linspace(1e-4, static_cast<double>(options_.filter_bands - 1),
                                           options_.filter_bands, real);     // [F]
  const at::Tensor angle = 2 * std::numbers::pi * t * bands;                 // [L, F]
  const at::Tensor features = torch::cat({t, torch::cos(angle), torch::sin(angle)}, -1);
  at::Tensor h = torch::sin(frequency * torch::addmm(in_bias, features, in_weight.t()));
  h = torch::sin(frequency * torch::addmm(hidden_bias, h, hidden_weight.t()));
  h = torch::mm(h, out_weight.t());  // [L, O * C], no bias
  const at::Tensor k = h.t().reshape({options_.outputs, options_.channels, made}) *
                       torch::exp(-t.squeeze(-1) * decay.unsqueeze(-1));  // exp(-|alpha_c| t)
  // Hyena's normalisation: each filter divided by the L1 norm of its taps, here over the
  // training length only, so that a longer kernel keeps the taps it was trained with. Without
  // it the filters were larger than S4D's and BST:SH trained far worse than SLIDE
  // (docs/block-state.md).
  const at::Tensor norm = k.narrow(-1, 0, trained).abs().sum(-1, true);
  return (k / norm).narrow(-1, 0, length);
}

StateSpaceImpl::StateSpaceImpl(const StateSpaceOptions& options) : options_(options) {
  if (options.kernel == "s4d")
    s4d = register_module("s4d", S4dKernel(options));
  else if (options.kernel == "unstructured")
    unstructured = register_module("unstructured", UnstructuredKernel(options));
  else
    throw Error("model.bst_kernel: unknown SSM kernel '" + options.kernel + "' (known: s4d, unstructured)");
  skip = register_parameter("skip", torch::randn({options.outputs, options.channels}));
}

at::Tensor StateSpaceImpl::kernel(std::int64_t length) { return s4d ? s4d(length) : unstructured(length); }

void StateSpaceImpl::check_input(const at::Tensor& u) const {
  if (u.dim() != 3 || u.size(1) != options_.channels)
    throw Error("state space: expected input [B, " + std::to_string(options_.channels) + ", L]");
}

at::Tensor StateSpaceImpl::forward(const at::Tensor& u) {
  check_input(u);
  const at::Tensor x = u.unsqueeze(1);  // [B, 1, C, L]
  return causal_fft_conv(x, kernel(u.size(2))) + skip.unsqueeze(-1) * x;
}

at::Tensor StateSpaceImpl::step(const at::Tensor& u, at::Tensor& state) {
  check_input(u);
  const at::Tensor x = u.unsqueeze(1);
  if (s4d) return s4d->step(u, state) + skip.unsqueeze(-1) * x;
  // No recurrence for a filter given by its taps: convolve everything seen again, keep the end.
  state = state.defined() ? torch::cat({state, u}, -1) : u;
  const std::int64_t seen = state.size(-1);
  return causal_fft_conv(state.unsqueeze(1), kernel(seen)).narrow(-1, seen - u.size(2), u.size(2)) +
         skip.unsqueeze(-1) * x;
}

bool is_state_space_dynamics(const std::string& name) {
  for (const char* own : {"log_dt", "log_a_real", "a_imag"})
    if (name == own || name.ends_with(std::string(".") + own)) return true;
  return false;
}

}  // namespace strata::nn
