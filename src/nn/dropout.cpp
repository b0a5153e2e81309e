#include "strata/nn/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>

#include "dropout_loops.h"
#include "strata/attn/counter_random.h"
#include "strata/attn/balanced_for.h"

namespace strata::nn {

namespace {

// A new tensor from a contiguous fp32 one in one parallel pass: pass(from, to, first, count)
// over ranges of 16K elements, `first` the range's offset in the tensor.
template <class Pass>
at::Tensor elementwise(const at::Tensor& x, const Pass& pass) {
  at::Tensor y = at::empty_like(x);
  const float* from = x.data_ptr<float>();
  float* to = y.data_ptr<float>();
  attn::balanced_for(x.numel(), 1 << 14, [&](std::int64_t begin, std::int64_t end) {
    pass(from + begin, to + begin, begin, end - begin);
  });
  return y;
}

// The mask applied to an fp32 tensor, in one pass.
at::Tensor apply_mask(const at::Tensor& in, std::uint64_t row, double p) {
  const MaskRule mask(row, p);
  return elementwise(in.contiguous(), [&](const float* from, float* to, std::int64_t first, std::int64_t count) {
    scale_kept(from, to, first, count, mask);
  });
}

// fp32 dropout as one autograd node that keeps no mask: backward draws it again from the row.
// Against x * mask this writes and reads no mask tensor (a quarter of the memory traffic of
// each pass, which on two cores is what elementwise work is bound by) and holds none between
// forward and backward.
class FloatDropout : public torch::autograd::Function<FloatDropout> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, std::int64_t row, double p) {
    ctx->saved_data["row"] = row;
    ctx->saved_data["p"] = p;
    return apply_mask(x, static_cast<std::uint64_t>(row), p);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto row = static_cast<std::uint64_t>(ctx->saved_data["row"].toInt());
    return {apply_mask(grads[0], row, ctx->saved_data["p"].toDouble()), at::Tensor(), at::Tensor()};
  }
};

// GELU then dropout on a contiguous fp32 tensor as one autograd node: one pass forward, one
// backward (from the saved input and the mask drawn again), where gelu and dropout apart make
// two each and keep GELU's output besides.
class FloatGeluDropout : public torch::autograd::Function<FloatGeluDropout> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input, std::int64_t row,
                            double p) {
    const at::Tensor x = input.contiguous();
    const MaskRule mask(static_cast<std::uint64_t>(row), p);
    at::Tensor y = elementwise(x, [&](const float* from, float* to, std::int64_t first, std::int64_t count) {
      gelu_kept(from, to, first, count, mask);
    });
    ctx->save_for_backward({x});
    ctx->saved_data["row"] = row;
    ctx->saved_data["p"] = p;
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    const float* x_data = x.data_ptr<float>();
    const MaskRule mask(static_cast<std::uint64_t>(ctx->saved_data["row"].toInt()), ctx->saved_data["p"].toDouble());
    const at::Tensor dx = elementwise(
        grads[0].contiguous(), [&](const float* dy, float* to, std::int64_t first, std::int64_t count) {
          gelu_kept_grad(x_data + first, dy, to, first, count, mask);
        });
    return {dx, at::Tensor(), at::Tensor()};
  }
};

std::uint64_t draw_seed() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

// The activations stream: a row of its own, apart from attention's dropout and Gumbel noise.
std::uint64_t activations_row() {
  return attn::counter_row(draw_seed(), attn::RandomStream::Activations, 0, 0, 0);
}

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  if (p >= 1) return x * 0;
  const std::uint64_t row = activations_row();
  if (x.scalar_type() == at::kFloat) return FloatDropout::apply(x, static_cast<std::int64_t>(row), p);
  // Another type: the same draws as a mask of its own type, scaled by its own 1 / (1 - p) (not
  // fp32's rounding of it).
  const at::Tensor ones = at::ones(x.sizes(), x.options().dtype(at::kFloat).requires_grad(false));
  const at::Tensor mask = apply_mask(ones, row, p).ne(0).to(x.scalar_type()) * (1.0 / (1.0 - p));
  return x * mask;
}

at::Tensor gelu_dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0 || p >= 1 || x.scalar_type() != at::kFloat || !x.device().is_cpu())
    return nn::dropout(torch::gelu(x), p, training);
  return FloatGeluDropout::apply(x, static_cast<std::int64_t>(activations_row()), p);
}

}  // namespace strata::nn
