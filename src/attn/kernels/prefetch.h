#pragma once
// Asking for memory ahead of its use, where the hardware prefetcher does not.
#include <cstdint>

namespace strata::attn {

// Asks for (prefetches) rows [0, rows) x [0, cols) of a row-major block ahead of their use. For
// reads that take a few bytes from each of several rows at once, which the hardware prefetcher
// follows poorly when the rows come from memory: the transposes' 16-row blocks, a query tile's
// rows in the micro-kernel. Always inlined: GCC deletes a call to a function that only
// prefetches, as having no effect.
template <class T>
[[gnu::always_inline]] inline void prefetch_rows(const T* p, std::int64_t ld, std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t kLine = 64 / sizeof(T);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; c += kLine) __builtin_prefetch(p + r * ld + c, 0, 3);
}

}  // namespace strata::attn
