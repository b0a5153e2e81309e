#pragma once
// Counter-based random numbers: a pure function of (seed, stream, b, h, i, n), so the fused
// kernel's backward regenerates exactly the Gumbel noise and dropout of its forward, in any
// order and on any thread, and the reference kernel reproduces both densely.
#include <cmath>
#include <cstdint>

namespace strata::attn {

// Dropout: attention weights; Activations: nn::dropout over a layer's outputs.
enum class RandomStream : std::uint64_t { Gumbel = 1, Dropout = 2, Activations = 3 };

inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The counter's part fixed by one attention row (b, h, i): kernels compute it once per row
// and call counter_uniform_at per key, one mix instead of five.
inline std::uint64_t counter_row(std::uint64_t seed, RandomStream stream, std::int64_t b,
                                 std::int64_t h, std::int64_t i) {
  std::uint64_t x = mix64(seed ^ static_cast<std::uint64_t>(stream));
  x = mix64(x ^ static_cast<std::uint64_t>(b));
  x = mix64(x ^ static_cast<std::uint64_t>(h));
  return mix64(x ^ static_cast<std::uint64_t>(i));
}

// Uniform in (0, 1), never 0 or 1: 24 random bits centred in their cells. The top cell's
// centre, 1 - 2^-25, rounds to 1 in float (whose Gumbel noise would be +inf, one pair in 2^24):
// it is clamped to the largest float below 1.
inline float counter_uniform_of_bits(std::uint32_t bits) {
  const float u = (static_cast<float>(bits) + 0.5f) * (1.0f / 16777216.0f);
  return u < 0x1.fffffep-1f ? u : 0x1.fffffep-1f;
}

// A 32-bit avalanche hash (Chris Wellons' lowbias32 constants): a bijection of 32-bit words.
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

// The 24 random bits of key n in a row: what every uniform, Gumbel draw and dropout decision
// of (row, n) is made from. The per-key part is 32-bit arithmetic on purpose: these loops run
// once per attention pair and per dropped-out activation, and AVX2 has no 64-bit multiply (a
// splitmix64 per key took 3 % of a training step's samples in the attention's dropout alone, as
// emulated 64-bit products). Two rounds: the key's low word with the row's low word, then the
// row's high word with the key's high one (keys past 2^32 stay distinct). Within a row the
// first round is a bijection of the key's low word, so no two keys below 2^32 share a hash.
inline std::int32_t counter_draw_at(std::uint64_t row, std::int64_t n) {
  const auto key = static_cast<std::uint64_t>(n);
  const std::uint32_t low = mix32(static_cast<std::uint32_t>(key) ^ static_cast<std::uint32_t>(row));
  const std::uint32_t high = static_cast<std::uint32_t>(row >> 32) ^ static_cast<std::uint32_t>(key >> 32);
  return static_cast<std::int32_t>(mix32(low ^ high) >> 8);
}

inline float counter_uniform_at(std::uint64_t row, std::int64_t n) {
  return counter_uniform_of_bits(static_cast<std::uint32_t>(counter_draw_at(row, n)));
}

inline float counter_uniform(std::uint64_t seed, RandomStream stream, std::int64_t b,
                             std::int64_t h, std::int64_t i, std::int64_t n) {
  return counter_uniform_at(counter_row(seed, stream, b, h, i), n);
}

// Gumbel(0, 1) noise -log(-log(u)).
inline float counter_gumbel(std::uint64_t seed, std::int64_t b, std::int64_t h, std::int64_t i,
                            std::int64_t n) {
  return -std::log(-std::log(counter_uniform(seed, RandomStream::Gumbel, b, h, i, n)));
}

// The smallest 24-bit draw whose uniform reaches `rate` (2^24 when none does). The uniform
// grows with the draw, so counter_uniform_at(row, n) >= rate exactly when counter_draw_at(row,
// n) >= this: an integer compare, which vectorises where the float one with a double does not.
inline std::int32_t first_kept_draw(double rate) {
  std::int32_t lo = 0, hi = 1 << 24;
  while (lo < hi) {
    const std::int32_t mid = lo + (hi - lo) / 2;
    if (counter_uniform_of_bits(static_cast<std::uint32_t>(mid)) >= rate)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

// Dropout keeps (b, h, i, n) when this is true; kept weights are scaled by 1 / (1 - rate).
inline bool counter_keep(std::uint64_t seed, double rate, std::int64_t b, std::int64_t h,
                         std::int64_t i, std::int64_t n) {
  return counter_uniform(seed, RandomStream::Dropout, b, h, i, n) >= rate;
}

}  // namespace strata::attn
