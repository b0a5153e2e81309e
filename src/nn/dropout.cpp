#include "strata/nn/dropout.h"

#include <ATen/Parallel.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <mutex>

#include "strata/attn/counter_random.h"

namespace strata::nn {

namespace {

// mask[e] = kept where element first + e's draw passes, 0 elsewhere. Compiled for AVX-512F,
// AVX2 and baseline x86-64 (the loader picks one): the 64-bit hashing vectorises.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void fill_mask(float* mask, std::int64_t first, std::int64_t count, std::uint64_t row, std::int32_t first_kept,
               float kept) {
  for (std::int64_t e = 0; e < count; ++e) {
    mask[e] = attn::counter_draw_at(row, first + e) >= first_kept ? kept : 0.0f;
  }
}

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
  // The mask in fp32 (the draws are the same whatever x's type); another type gets its own
  // 1 / (1 - p), not fp32's rounding of it.
  at::Tensor mask = at::empty(x.sizes(), x.options().dtype(at::kFloat).requires_grad(false));
  float* m = mask.data_ptr<float>();
  const auto kept = static_cast<float>(1.0 / (1.0 - p));
  at::parallel_for(0, mask.numel(), 1 << 14, [&](std::int64_t begin, std::int64_t end) {
    fill_mask(m + begin, begin, end - begin, row, first_kept, kept);
  });
  if (x.scalar_type() != at::kFloat) mask = mask.ne(0).to(x.scalar_type()) * (1.0 / (1.0 - p));
  return x * mask;
}

}  // namespace strata::nn
