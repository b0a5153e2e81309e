#include "strata/nn/dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>

#include "strata/attn/counter_random.h"
#include "strata/attn/balanced_for.h"

namespace strata::nn {

namespace {

// out[e] = in[e] * kept where element first + e's draw passes, in[e] * 0 elsewhere: the forward
// on x and, with the same row, the backward on the output's gradient. Compiled for AVX-512
// (x86-64-v4: its DQ extension multiplies 64-bit lanes, which AVX-512F alone emulates), AVX2
// and baseline x86-64 (the loader picks one): the 64-bit hashing vectorises.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
void scale_kept(const float* in, float* out, std::int64_t first, std::int64_t count, std::uint64_t row,
                std::int32_t first_kept, float kept) {
  for (std::int64_t e = 0; e < count; ++e)
    out[e] = in[e] * (attn::counter_draw_at(row, first + e) >= first_kept ? kept : 0.0f);
}

// The mask applied to a contiguous fp32 tensor in parallel, in one pass.
at::Tensor apply_mask(const at::Tensor& in, std::uint64_t row, double p) {
  const at::Tensor x = in.contiguous();
  at::Tensor y = at::empty_like(x);
  const float* from = x.data_ptr<float>();
  float* to = y.data_ptr<float>();
  const std::int32_t first_kept = attn::first_kept_draw(p);
  const auto kept = static_cast<float>(1.0 / (1.0 - p));
  attn::balanced_for(x.numel(), 1 << 14, [&](std::int64_t begin, std::int64_t end) {
    scale_kept(from + begin, to + begin, begin, end - begin, row, first_kept, kept);
  });
  return y;
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

std::uint64_t draw_seed() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get<at::CPUGeneratorImpl>()->random64();
}

}  // namespace

at::Tensor dropout(const at::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  if (p >= 1) return x * 0;
  // The activations stream: a row of its own, apart from attention's dropout and Gumbel noise.
  const std::uint64_t row = attn::counter_row(draw_seed(), attn::RandomStream::Activations, 0, 0, 0);
  if (x.scalar_type() == at::kFloat) return FloatDropout::apply(x, static_cast<std::int64_t>(row), p);
  // Another type: the same draws as a mask of its own type, scaled by its own 1 / (1 - p) (not
  // fp32's rounding of it).
  const at::Tensor ones = at::ones(x.sizes(), x.options().dtype(at::kFloat).requires_grad(false));
  const at::Tensor mask = apply_mask(ones, row, p).ne(0).to(x.scalar_type()) * (1.0 / (1.0 - p));
  return x * mask;
}

}  // namespace strata::nn
