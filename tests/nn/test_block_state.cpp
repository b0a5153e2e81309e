// The Block-State Transformer's pieces (thesis ch. 5): FFT convolution, the S4D and
// unstructured kernels, the state-space layer, the BST layer against the SLIDE layer, and
// recomputation by span (what trains a layer at a million tokens).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <complex>
#include <functional>
#include <tuple>
#include <vector>

#include "strata/core/error.h"
#include "strata/nn/block_state_layer.h"
#include "strata/nn/recompute.h"
#include "strata/nn/state_space.h"

namespace strata {
namespace {

using nn::ContextStates;

// y[b, c, t] = sum_{s <= t} k[c, s] u[b, c, t - s], one term at a time.
at::Tensor direct_causal_conv(const at::Tensor& u, const at::Tensor& k) {
  at::Tensor y = torch::zeros_like(u);
  const auto ua = u.accessor<double, 3>();
  const auto ka = k.accessor<double, 2>();
  auto ya = y.accessor<double, 3>();
  for (std::int64_t b = 0; b < u.size(0); ++b)
    for (std::int64_t c = 0; c < u.size(1); ++c)
      for (std::int64_t t = 0; t < u.size(2); ++t)
        for (std::int64_t s = 0; s <= t; ++s) ya[b][c][t] += ka[c][s] * ua[b][c][t - s];
  return y;
}

TEST(StateSpace, FftConvolutionEqualsTheDirectCausalConvolution) {
  torch::manual_seed(1);
  const at::Tensor u = torch::randn({2, 3, 37}, torch::kDouble), k = torch::randn({3, 37}, torch::kDouble);
  EXPECT_TRUE(torch::allclose(nn::causal_fft_conv(u, k), direct_causal_conv(u, k), 1e-9, 1e-9));
  // An FFT of length L instead of 2L convolves circularly: the future wraps into the past.
  const at::Tensor circular = torch::fft::irfft(torch::fft::rfft(u, 37, -1) * torch::fft::rfft(k, 37, -1), 37, -1);
  EXPECT_GT((circular - direct_causal_conv(u, k)).abs().max().item<double>(), 0.1);
  EXPECT_THROW(nn::causal_fft_conv(u, k.narrow(1, 0, 36)), Error);
}

TEST(StateSpace, LongConvolutionsGoAChannelGroupAtATimeWithTheSameValuesAndGradients) {
  // At 2^18 positions 4 channels go at once: 6 channels are 2 groups, each convolved again in
  // backward. Each channel alone (one group) is the reference.
  torch::manual_seed(16);
  const std::int64_t length = 1 << 18;
  const at::Tensor u = torch::randn({1, 6, length}, torch::dtype(torch::kDouble).requires_grad(true));
  const at::Tensor k = (torch::randn({6, length}, torch::kDouble) * torch::exp(-torch::arange(length) / 50.0))
                           .requires_grad_(true);
  const at::Tensor g = torch::randn({1, 6, length}, torch::kDouble);
  const at::Tensor grouped = nn::causal_fft_conv(u, k);
  const auto grads = torch::autograd::grad({grouped}, {u, k}, {g});
  std::vector<at::Tensor> alone;
  for (std::int64_t c = 0; c < 6; ++c) alone.push_back(nn::causal_fft_conv(u.narrow(1, c, 1), k.narrow(0, c, 1)));
  const at::Tensor reference = torch::cat(alone, 1);
  const auto reference_grads = torch::autograd::grad({reference}, {u, k}, {g});
  EXPECT_TRUE(torch::allclose(grouped, reference, 1e-9, 1e-9));
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(torch::allclose(grads[i], reference_grads[i], 1e-9, 1e-9)) << i;
}

nn::StateSpaceOptions options_of(const std::string& kernel, std::int64_t outputs) {
  nn::StateSpaceOptions o;
  o.kernel = kernel;
  o.channels = 3;
  o.outputs = outputs;
  o.states = 8;
  o.filter_length = 16;
  o.filter_order = 8;
  o.filter_bands = 2;
  return o;
}

TEST(StateSpace, S4dKernelEqualsTheUnrolledRecurrence) {
  // x_k = exp(dt A) x_{k-1} + (exp(dt A) - 1) / A u_k, y_k = 2 Re(C x_k): zero-order hold
  // (Eqs. 5.1-5.3), run step by step in complex double.
  torch::manual_seed(2);
  nn::S4dKernel kernel(options_of("s4d", 2));
  kernel->to(torch::kDouble);
  const std::int64_t length = 40, modes = 4;
  const at::Tensor u = torch::randn({1, 3, length}, torch::kDouble);
  const at::Tensor k = kernel->forward(length).detach();  // [2, 3, L]
  ASSERT_EQ(k.sizes(), (std::vector<std::int64_t>{2, 3, length}));
  const at::Tensor by_fft = nn::causal_fft_conv(u.unsqueeze(1), k);  // [1, 2, 3, L]
  const at::Tensor log_dt = kernel->log_dt.detach(), log_a = kernel->log_a_real.detach(),
                   a_im = kernel->a_imag.detach(), c = kernel->c.detach();
  using Complex = std::complex<double>;
  for (std::int64_t o = 0; o < 2; ++o)
    for (std::int64_t ch = 0; ch < 3; ++ch) {
      std::vector<Complex> x(modes, 0.0);
      for (std::int64_t t = 0; t < length; ++t) {
        double y = 0;
        for (std::int64_t n = 0; n < modes; ++n) {
          const Complex a(-std::exp(log_a[ch][n].item<double>()), a_im[ch][n].item<double>());
          const Complex dt_a = a * std::exp(log_dt[ch].item<double>());
          x[n] = std::exp(dt_a) * x[n] + (std::exp(dt_a) - 1.0) / a * u[0][ch][t].item<double>();
          y += 2 * (Complex(c[o][ch][n][0].item<double>(), c[o][ch][n][1].item<double>()) * x[n]).real();
        }
        EXPECT_NEAR(by_fft[0][o][ch][t].item<double>(), y, 1e-9) << "output " << o << " channel " << ch << " t " << t;
      }
    }
}

TEST(StateSpace, KernelsAreGeneratedForAnyLength) {
  // The first L positions of a longer kernel are the kernel of length L: a model trained at
  // L runs at 16 L with the same filter on the positions it knows.
  torch::manual_seed(3);
  for (const std::string kind : {"s4d", "unstructured"}) {
    nn::StateSpace ssm(options_of(kind, 2));
    const at::Tensor shorter = ssm->kernel(16), longer = ssm->kernel(256);
    ASSERT_EQ(longer.sizes(), (std::vector<std::int64_t>{2, 3, 256})) << kind;
    EXPECT_TRUE(torch::allclose(longer.narrow(2, 0, 16), shorter, 1e-5, 1e-6)) << kind;
    EXPECT_TRUE(longer.isfinite().all().item<bool>()) << kind;
  }
}

TEST(StateSpace, UnstructuredFiltersHaveUnitL1NormOverTheTrainingLength) {
  // Hyena's normalisation, over the training length whatever length is made: a constant input
  // then gives an output no larger than itself there, whatever the parameters' scale, and a
  // shorter kernel is the longer one's first taps, not renormalised.
  torch::manual_seed(6);
  nn::StateSpace ssm(options_of("unstructured", 2));
  const at::Tensor longest = ssm->kernel(64);
  const at::Tensor norms = longest.narrow(2, 0, 16).abs().sum(2);
  EXPECT_TRUE(torch::allclose(norms, torch::ones_like(norms), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(ssm->kernel(4), longest.narrow(2, 0, 4), 1e-5, 1e-6));  // not renormalised
  torch::NoGradGuard no_grad;
  for (const auto& p : ssm->unstructured->parameters()) p.mul_(3);  // a trained filter's other scale
  const at::Tensor constant = torch::ones({1, 3, 16});
  const at::Tensor convolved = nn::causal_fft_conv(constant.unsqueeze(1), ssm->kernel(16));
  EXPECT_LE(convolved.abs().max().item<double>(), 1 + 1e-5);
}

TEST(StateSpace, OutputsReadOnlyTheirPast) {
  torch::manual_seed(4);
  for (const std::string kind : {"s4d", "unstructured"}) {
    nn::StateSpace ssm(options_of(kind, 2));
    const at::Tensor u = torch::randn({2, 3, 30});
    at::Tensor changed = u.clone();
    changed.narrow(2, 12, 18).normal_();
    const at::Tensor a = ssm->forward(u), b = ssm->forward(changed);
    ASSERT_EQ(a.sizes(), (std::vector<std::int64_t>{2, 2, 3, 30}));
    EXPECT_TRUE(torch::allclose(a.narrow(3, 0, 12), b.narrow(3, 0, 12), 1e-5, 1e-5)) << kind;
    EXPECT_FALSE(torch::allclose(a.narrow(3, 12, 18), b.narrow(3, 12, 18), 1e-3, 1e-3)) << kind;
  }
}

TEST(StateSpace, SteppingInPiecesEqualsTheWholeConvolution) {
  // Decoding's state: S4D's recurrence (the state before a piece, moved on by exp(dt A T)) and
  // the unstructured kernel's re-convolution give the outputs the whole sequence's FFT does.
  for (const std::string kind : {"s4d", "unstructured"}) {
    torch::manual_seed(9);
    nn::StateSpace ssm(options_of(kind, 2));
    ssm->to(torch::kDouble);
    torch::NoGradGuard no_grad;
    const at::Tensor u = torch::randn({2, 3, 40}, torch::kDouble);
    const at::Tensor whole = ssm->forward(u);
    at::Tensor state;
    std::vector<at::Tensor> pieces;
    std::int64_t at = 0;
    for (std::int64_t n : {7, 1, 1, 12, 1, 18}) {
      pieces.push_back(ssm->step(u.narrow(2, at, n), state));
      at += n;
    }
    EXPECT_TRUE(torch::allclose(torch::cat(pieces, 3), whole, 1e-9, 1e-9)) << kind;
    EXPECT_EQ(state.size(-1), kind == "s4d" ? 4 : 40) << kind;  // N / 2 modes, or every input
  }
}

TEST(StateSpace, GradientsMatchFiniteDifferences) {
  for (const std::string kind : {"s4d", "unstructured"}) {
    torch::manual_seed(5);
    nn::StateSpace ssm(options_of(kind, 2));
    ssm->to(torch::kDouble);
    const at::Tensor u = torch::randn({1, 3, 12}, torch::kDouble), w = torch::randn({1, 2, 3, 12}, torch::kDouble);
    const auto loss = [&] { return (ssm->forward(u) * w).sum(); };
    loss().backward();
    for (const auto& named : ssm->named_parameters()) {
      at::Tensor p = named.value();
      const at::Tensor grad = p.grad().clone();
      torch::NoGradGuard no_grad;
      at::Tensor flat = p.view({-1});
      for (std::int64_t i = 0; i < flat.numel(); i += std::max<std::int64_t>(1, flat.numel() / 5)) {
        const double h = 1e-6, kept = flat[i].item<double>();
        flat[i] = kept + h;
        const double up = loss().item<double>();
        flat[i] = kept - h;
        const double down = loss().item<double>();
        flat[i] = kept;
        EXPECT_NEAR(grad.view({-1})[i].item<double>(), (up - down) / (2 * h), 1e-5 * (1 + std::abs(up)))
            << kind << " " << named.key() << "[" << i << "]";
      }
    }
  }
}

TEST(StateSpace, DynamicsAreNamedForTheirOwnOptimiserGroup) {
  nn::StateSpace ssm(options_of("s4d", 1));
  std::vector<std::string> dynamics;
  for (const auto& named : ssm->named_parameters())
    if (nn::is_state_space_dynamics(named.key())) dynamics.push_back(named.key());
  EXPECT_EQ(dynamics, (std::vector<std::string>{"s4d.log_dt", "s4d.log_a_real", "s4d.a_imag"}));
  EXPECT_FALSE(nn::is_state_space_dynamics("layers.0.ssm.s4d.c"));
  EXPECT_THROW(nn::StateSpace(options_of("s5", 1)), Error);
}

TEST(StateSpace, LongS4dKernelsAreMadeSpanBySpanWithTheSameValuesAndGradients) {
  // Past 8192 positions the kernel is made in spans and made again in backward; it must equal
  // K_l = 2 Re sum_n C~_n exp(dt A_n l) made at once, and so must its gradients.
  torch::manual_seed(12);
  nn::S4dKernel kernel(options_of("s4d", 2));
  kernel->to(torch::kDouble);
  const std::int64_t length = 8192 * 2 + 77;
  const at::Tensor w = torch::randn({2, 3, length}, torch::kDouble);
  const auto gradients = [&](const std::function<at::Tensor()>& make) {
    for (const at::Tensor& p : kernel->parameters()) p.mutable_grad().reset();
    const at::Tensor k = make();
    (k * w).sum().backward();
    std::vector<at::Tensor> grads{k.detach()};
    for (const at::Tensor& p : kernel->parameters()) grads.push_back(p.grad().clone());
    return grads;
  };
  const auto spans = gradients([&] { return kernel->forward(length); });
  const auto once = gradients([&] {
    const nn::S4dKernelImpl::Discretised d = kernel->discretised();
    const at::Tensor powers = torch::exp(d.dt_a.unsqueeze(-1) * torch::arange(length, torch::kDouble));
    return 2 * torch::real(torch::einsum("ocn,cnl->ocl", {d.c_tilde, powers}));
  });
  ASSERT_EQ(spans.size(), once.size());
  for (std::size_t i = 0; i < spans.size(); ++i)
    EXPECT_TRUE(torch::allclose(spans[i], once[i], 1e-9, 1e-9)) << "tensor " << i;
}

TEST(Recompute, SpansGiveTheWholeFunctionsValuesAndGradients) {
  // f reads each position, the one before it (so a span needs `before` = 1), a whole tensor
  // and a parameter, and draws dropout: recomputed span by span, the values and gradients are
  // the same as one pass with the graph kept, dropout masks included.
  torch::manual_seed(13);
  const at::Tensor x = torch::randn({2, 23, 3}, torch::requires_grad());
  const at::Tensor scale = torch::randn({3}, torch::requires_grad());
  const at::Tensor weight = torch::randn({3, 3}, torch::requires_grad());
  const auto f = [&](const at::Tensor& in, const at::Tensor& s, std::int64_t start, std::int64_t end) {
    const std::int64_t before = start > 0 ? 1 : 0;
    const at::Tensor previous = torch::constant_pad_nd(in, {0, 0, 1 - before, 0}).narrow(1, 0, end - start);
    const at::Tensor mixed = torch::tanh(torch::matmul(in.narrow(1, before, end - start) * s + previous, weight));
    return torch::dropout(mixed, 0.3, true);
  };
  torch::manual_seed(14);
  std::vector<at::Tensor> whole_parts;
  for (std::int64_t start = 0; start < 23; start += 5) {
    const std::int64_t from = std::max<std::int64_t>(0, start - 1), end = std::min<std::int64_t>(23, start + 5);
    whole_parts.push_back(f(x.narrow(1, from, end - from), scale, start, end));
  }
  const at::Tensor whole = torch::cat(whole_parts, 1);
  const at::Tensor g = torch::randn_like(whole);
  const auto grads = torch::autograd::grad({whole}, {x, scale, weight}, {g});
  torch::manual_seed(14);
  const auto fn = [&](const std::vector<at::Tensor>& in, std::int64_t start, std::int64_t end) {
    return f(in[0], in[1], start, end);
  };
  const at::Tensor spans = nn::recompute_by_span(fn, {{x, 1, 1}, {scale}}, 23, 5, 1, {weight});
  torch::manual_seed(99);  // backward restores the generator state each span had
  const auto span_grads = torch::autograd::grad({spans}, {x, scale, weight}, {g});
  EXPECT_TRUE(torch::allclose(spans, whole));
  for (std::size_t i = 0; i < grads.size(); ++i) EXPECT_TRUE(torch::allclose(span_grads[i], grads[i], 1e-5, 1e-6)) << i;
  EXPECT_GT((spans == 0).sum().item<std::int64_t>(), 0);  // dropout did drop
  EXPECT_THROW(nn::recompute_by_span(fn, {{x, 1, 1}, {scale}}, 23, 0, 1, {}), Error);
  EXPECT_THROW(nn::recompute_by_span(fn, {{x, 1, 1}, {scale}}, 24, 5, 1, {}), Error);
}

nn::BlockStateOptions layer_options(ContextStates context, bool block_state, const std::string& kernel = "s4d") {
  nn::BlockStateOptions o;
  o.d_model = 16;
  o.heads = 4;
  o.d_ff = 32;
  o.window = 4;
  o.dropout = 0;
  o.block_state = block_state;
  o.context = context;
  o.filters = 3;
  o.ssm = options_of(kernel, 1);
  o.ssm.channels = 4;
  return o;
}

TEST(BlockStateLayer, WithZeroContextStatesItIsTheSlideLayer) {
  // The context states' values are zero when the SSM's output is (and, for MF, its learned
  // initial context and ids): the cross-attention adds nothing, and the output projection's
  // first half is the SLIDE layer's.
  for (const ContextStates context : {ContextStates::SH, ContextStates::MH, ContextStates::MF}) {
    torch::manual_seed(6);
    nn::BlockStateLayer bst(layer_options(context, true));
    nn::BlockStateLayer slide(layer_options(context, false));
    bst->eval();
    slide->eval();
    {
      torch::NoGradGuard no_grad;
      bst->ssm_in->weight.zero_();
      if (context == ContextStates::MF) {
        bst->initial_context.zero_();
        bst->context_ids.zero_();
      }
      for (const auto& named : slide->named_parameters()) {
        const at::Tensor source = bst->named_parameters()[named.key()];
        named.value().copy_(named.key() == "out_proj.weight" ? source.narrow(1, 0, 16) : source);
      }
    }
    const at::Tensor x = torch::randn({2, 11, 16});
    EXPECT_TRUE(torch::allclose(bst->forward(x), slide->forward(x), 1e-5, 1e-6)) << int(context);
    // With the states on, the layer differs.
    torch::NoGradGuard no_grad;
    bst->ssm_in->weight.normal_();
    EXPECT_FALSE(torch::allclose(bst->forward(x), slide->forward(x), 1e-3, 1e-3)) << int(context);
  }
}

TEST(BlockStateLayer, SlideSeesItsOwnBlockAndThePreviousOneOnly) {
  torch::manual_seed(7);
  nn::BlockStateLayer slide(layer_options(ContextStates::SH, false));
  slide->eval();
  const at::Tensor x = torch::randn({1, 16, 16});
  at::Tensor changed = x.clone();
  changed.narrow(1, 0, 4).normal_();  // block 0
  const at::Tensor a = slide->forward(x), b = slide->forward(changed);
  // Blocks 0 and 1 read block 0; blocks 2 and 3 do not.
  EXPECT_FALSE(torch::allclose(a.narrow(1, 4, 4), b.narrow(1, 4, 4), 1e-4, 1e-4));
  EXPECT_TRUE(torch::allclose(a.narrow(1, 8, 8), b.narrow(1, 8, 8), 1e-6, 1e-6));
}

TEST(BlockStateLayer, XlMemoryIsSlideWithoutGradientThroughThePreviousBlock) {
  // Transformer-XL's cache: the same outputs as SLIDE (14 tokens: the last block is partial),
  // but block 2's outputs pass no gradient to block 1's inputs, while the projections still
  // learn from the cached keys. Both kernels.
  for (attn::Kernel kernel : {attn::Kernel::Fused, attn::Kernel::Reference}) {
    torch::manual_seed(10);
    nn::BlockStateOptions options = layer_options(ContextStates::SH, false);
    options.kernel = kernel;
    nn::BlockStateLayer slide(options);
    options.xl_memory = true;
    nn::BlockStateLayer xl(options);
    {
      torch::NoGradGuard no_grad;
      for (const auto& named : xl->named_parameters()) named.value().copy_(slide->named_parameters()[named.key()]);
    }
    const at::Tensor x = torch::randn({2, 14, 16}, torch::requires_grad());
    const at::Tensor a = slide->forward(x), b = xl->forward(x);
    EXPECT_TRUE(torch::allclose(a, b, 1e-5, 1e-5)) << "max difference " << (a - b).abs().max().item<double>();
    const at::Tensor from_slide = torch::autograd::grad({a.narrow(1, 8, 4).sum()}, {x})[0];
    const at::Tensor from_xl = torch::autograd::grad({b.narrow(1, 8, 4).sum()}, {x}, {}, /*retain_graph=*/true)[0];
    EXPECT_GT(from_slide.narrow(1, 4, 4).abs().max().item<double>(), 1e-4);
    EXPECT_EQ(from_xl.narrow(1, 4, 4).abs().max().item<double>(), 0.0);
    EXPECT_GT(from_xl.narrow(1, 8, 4).abs().max().item<double>(), 1e-4);  // its own block, trained through
    b.narrow(1, 8, 4).sum().backward();
    EXPECT_GT(xl->k_proj->weight.grad().abs().max().item<double>(), 0.0);
  }
}

TEST(BlockStateLayer, RecurrentStateCarriesBlocksPastTheWindow) {
  // Block-Recurrent: block 3 cannot see block 0 through SLIDE, but the state carries it; a
  // gate that keeps all of the old state (g = 1) carries nothing.
  torch::manual_seed(11);
  nn::BlockStateLayer recurrent(layer_options(ContextStates::Recurrent, true));
  recurrent->eval();
  const at::Tensor x = torch::randn({1, 16, 16});
  at::Tensor changed = x.clone();
  changed.narrow(1, 0, 4).normal_();  // block 0
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(torch::allclose(recurrent->forward(x).narrow(1, 12, 4), recurrent->forward(changed).narrow(1, 12, 4),
                               1e-4, 1e-4));
  recurrent->gate_bias.fill_(100.0);
  EXPECT_TRUE(torch::allclose(recurrent->forward(x).narrow(1, 12, 4), recurrent->forward(changed).narrow(1, 12, 4),
                              1e-6, 1e-6));
  EXPECT_EQ(nn::context_states_from_name("recurrent"), ContextStates::Recurrent);
  // Decoding through a cache is not built for it: a clear error, not a wrong answer.
  nn::LayerKvCache cache;
  EXPECT_THROW(recurrent->forward(x, &cache, 0), Error);
}

TEST(BlockStateLayer, FusedAndReferenceKernelsAgree) {
  for (const ContextStates context :
       {ContextStates::SH, ContextStates::MH, ContextStates::MF, ContextStates::Recurrent}) {
    torch::manual_seed(8);
    nn::BlockStateOptions fused_options = layer_options(context, true, "unstructured");
    nn::BlockStateOptions reference_options = fused_options;
    reference_options.kernel = attn::Kernel::Reference;
    nn::BlockStateLayer fused(fused_options), reference(reference_options);
    {
      torch::NoGradGuard no_grad;
      for (const auto& named : reference->named_parameters()) named.value().copy_(fused->named_parameters()[named.key()]);
    }
    const at::Tensor x = torch::randn({2, 13, 16}, torch::requires_grad());
    const at::Tensor a = fused->forward(x);
    const at::Tensor ga = torch::autograd::grad({a.square().sum()}, {x})[0];
    const at::Tensor b = reference->forward(x);
    const at::Tensor gb = torch::autograd::grad({b.square().sum()}, {x})[0];
    EXPECT_TRUE(torch::allclose(a, b, 1e-4, 1e-5)) << int(context);
    EXPECT_TRUE(torch::allclose(ga, gb, 1e-3, 1e-4)) << int(context);
  }
}

TEST(BlockStateLayer, RecomputedBySpanEqualsTheWholePass) {
  // 2 spans of 8 tokens and a partial one (W = 4): the values and every gradient (input and
  // parameters) equal forward()'s, for SLIDE, SH and MH, with both kernels of the SSM.
  for (const auto& [context, block_state, kernel] :
       {std::tuple{ContextStates::SH, false, "s4d"}, std::tuple{ContextStates::SH, true, "s4d"},
        std::tuple{ContextStates::MH, true, "unstructured"}}) {
    torch::manual_seed(15);
    nn::BlockStateLayer layer(layer_options(context, block_state, kernel));
    const at::Tensor x = torch::randn({2, 21, 16}, torch::requires_grad());
    const at::Tensor g = torch::randn({2, 21, 16});
    const auto run = [&](const std::function<at::Tensor()>& forward) {
      for (const at::Tensor& p : layer->parameters()) p.mutable_grad().reset();
      x.mutable_grad().reset();
      const at::Tensor out = forward();
      out.backward(g);
      std::vector<at::Tensor> all{out.detach(), x.grad().clone()};
      for (const at::Tensor& p : layer->parameters()) all.push_back(p.grad().clone());
      return all;
    };
    const auto whole = run([&] { return layer->forward(x); });
    const auto spans = run([&] { return layer->forward_recomputed(x, 8); });
    for (std::size_t i = 0; i < whole.size(); ++i)
      EXPECT_TRUE(torch::allclose(spans[i], whole[i], 1e-4, 1e-5))
          << int(context) << block_state << " tensor " << i << ": " << (spans[i] - whole[i]).abs().max().item<double>();
  }
  nn::BlockStateLayer sh(layer_options(ContextStates::SH, true));
  EXPECT_THROW(sh->forward_recomputed(torch::randn({1, 12, 16}), 6), Error);  // not a multiple of W
  nn::BlockStateLayer mf(layer_options(ContextStates::MF, true));
  EXPECT_THROW(mf->forward_recomputed(torch::randn({1, 12, 16}), 8), Error);
}

TEST(BlockStateLayer, NamesItsBadSettings) {
  EXPECT_THROW(nn::context_states_from_name("sm"), Error);
  nn::BlockStateOptions o = layer_options(ContextStates::SH, true);
  o.window = 0;
  EXPECT_THROW(nn::BlockStateLayer{o}, Error);
  o = layer_options(ContextStates::SH, true);
  o.ssm.states = 7;
  try {
    nn::BlockStateLayer layer(o);
    FAIL() << "an odd S4D state size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.bst_states"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
