#pragma once
// balanced_for(): at::parallel_for for work whose threads do not run at the same speed. (On
// the attention floor, the lowest that links libtorch; the linear layers use it too.)
//
// at::parallel_for hands each thread an equal, fixed share; when one core runs slower (a
// virtual machine's second vCPU can, by up to ~30 % over a whole run), the other waits for it
// at the end of every parallel region. Here each thread starts on its equal, contiguous share
// and runs it from the front, claiming half of what is left there, at most `grain` items, at a
// time. A thread whose share is done moves the back half of the share with the most left into
// its own, and goes on there the same way, so stolen work can be stolen back. Claims shrink as
// a share runs out, so whichever thread finishes first finds the other at most a short claim
// from done: with fixed `grain` claims, and stolen ranges run whole, it waited up to a whole
// one, 0.1-5 ms in a linear layer's weight gradient. Ranges stay contiguous and in order within
// a share, so what a thread keeps in cache between ranges (the attention kernel's transposed
// head) is still reused; the short and stolen ranges are the price of the balance.
//
// fn(begin, end) is called on disjoint ranges that cover [0, n) exactly once, from any thread
// and in any order: what it computes for an item must not depend on which thread runs it.
// Inside a parallel region, or on one thread, the ranges run in order on the calling thread.
#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>

namespace strata::attn {

namespace balanced_for_detail {

// One share's unclaimed items [front, back), packed in one word so that the owner (taking
// from the front) and thieves (taking from the back) claim with one compare-and-swap.
struct alignas(64) Share {
  std::atomic<std::uint64_t> range{0};

  static std::uint64_t pack(std::uint32_t front, std::uint32_t back) {
    return std::uint64_t(back) << 32 | front;
  }
  void set(std::int64_t front, std::int64_t back) {
    range.store(pack(std::uint32_t(front), std::uint32_t(back)), std::memory_order_relaxed);
  }
  std::int64_t left() const {
    const std::uint64_t r = range.load(std::memory_order_relaxed);
    return std::int64_t(r >> 32) - std::int64_t(r & 0xffffffffu);
  }
  // Claims half of what is left (rounded up), at most `most` items, from the front (the
  // owner) or the back (a thief). False when nothing is left.
  bool claim(bool from_back, std::int64_t most, std::int64_t& begin, std::int64_t& end) {
    std::uint64_t r = range.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t front = std::uint32_t(r & 0xffffffffu), back = std::uint32_t(r >> 32);
      if (front >= back) return false;
      const std::uint32_t left = back - front;
      const std::uint32_t take = std::uint32_t(std::min<std::int64_t>(most, (left + 1) / 2));
      const std::uint64_t next = from_back ? pack(front, back - take) : pack(front + take, back);
      if (range.compare_exchange_weak(r, next, std::memory_order_relaxed)) {
        begin = from_back ? back - take : front;
        end = from_back ? back : front + take;
        return true;
      }
    }
  }
};

}  // namespace balanced_for_detail

// With per-thread state: each thread calls make() once and hands what it made to every range
// it runs, fn(state, begin, end) (scratch buffers, a head kept transposed). The stateless form
// below calls this one.
template <class Make, class F>
void balanced_for(std::int64_t n, std::int64_t grain, const Make& make, const F& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t threads = std::min<std::int64_t>(at::get_num_threads(), (n + grain - 1) / grain);
  if (threads <= 1 || at::in_parallel_region() || n > std::numeric_limits<std::uint32_t>::max()) {
    auto state = make();
    for (std::int64_t begin = 0; begin < n; begin += grain) fn(state, begin, std::min(n, begin + grain));
    return;
  }
  using balanced_for_detail::Share;
  const std::unique_ptr<Share[]> shares(new Share[threads]);
  for (std::int64_t s = 0; s < threads; ++s) shares[s].set(s * n / threads, (s + 1) * n / threads);
  at::parallel_for(0, threads, 1, [&](std::int64_t first, std::int64_t last) {
    auto state = make();
    std::int64_t begin = 0, end = 0;
    for (std::int64_t s = first; s < last; ++s)
      while (shares[s].claim(false, grain, begin, end)) fn(state, begin, end);
    // Its own shares are done: shares[first], empty, takes what it steals.
    for (;;) {
      std::int64_t most = 0, from = -1;
      for (std::int64_t s = 0; s < threads; ++s)
        if (const std::int64_t left = shares[s].left(); left > most) most = left, from = s;
      if (from < 0) return;
      if (!shares[from].claim(true, n, begin, end)) continue;
      shares[first].set(begin, end);
      while (shares[first].claim(false, grain, begin, end)) fn(state, begin, end);
    }
  });
}

template <class F>
void balanced_for(std::int64_t n, std::int64_t grain, const F& fn) {
  balanced_for(n, grain, [] { return 0; }, [&](int, std::int64_t begin, std::int64_t end) { fn(begin, end); });
}

}  // namespace strata::attn
