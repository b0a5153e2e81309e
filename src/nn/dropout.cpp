#include "strata/nn/dropout.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>

#include "strata/attn/counter_random.h"

namespace strata::nn {

namespace {

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
  const std::int32_t first_kept = attn::first_kept_draw(p);
  at::Tensor mask = at::empty(x.sizes(), x.options().requires_grad(false));
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, mask.scalar_type(), "strata_dropout", [&] {
    const scalar_t kept = static_cast<scalar_t>(1.0 / (1.0 - p));
    scalar_t* m = mask.data_ptr<scalar_t>();
    at::parallel_for(0, mask.numel(), 1 << 14, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t e = begin; e < end; ++e) {
        const auto draw = static_cast<std::int32_t>(attn::mix64(row ^ static_cast<std::uint64_t>(e)) >> 40);
        m[e] = draw >= first_kept ? kept : scalar_t(0);
      }
    });
  });
  return x * mask;
}

}  // namespace strata::nn
