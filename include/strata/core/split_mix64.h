#pragma once
// splitmix64 (Steele, Lea and Flood 2014): a small, fast generator whose draws, and the
// integers and reals made from them here, are the same on every platform (<random>'s
// distributions differ between standard libraries). Data sampling that must repeat exactly,
// such as denoising noise and training subsets, draws from it.
#include <cstdint>
#include <initializer_list>

namespace strata {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t state) : state_(state) {}
  // A stream per tuple, e.g. (seed, epoch, example): each value is mixed into the state.
  SplitMix64(std::initializer_list<std::uint64_t> keys) : state_(0x2545F4914F6CDD1DULL) {
    for (std::uint64_t key : keys) state_ = mix(state_ ^ key);
  }

  std::uint64_t next() { return mix(state_ += 0x9E3779B97F4A7C15ULL); }

  // Uniform in [0, n) for n > 0, by Lemire's multiply-shift with rejection (unbiased).
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
    if (static_cast<std::uint64_t>(product) < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (static_cast<std::uint64_t>(product) < threshold) product = static_cast<unsigned __int128>(next()) * n;
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_;
};

}  // namespace strata
