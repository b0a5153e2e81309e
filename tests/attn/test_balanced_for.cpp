// balanced_for (attn/balanced_for.h): every item runs once in ranges of at most `grain`, no
// range is longer than half a share (so the last ranges of a share are short), a thread held up on its first range has the rest of its share taken by the other, each thread
// makes its state once, and inside a parallel region the ranges run in order on the caller.
#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "strata/attn/balanced_for.h"

namespace strata::attn {
namespace {

// Runs the test body with `threads` threads, restoring the count after.
class WithThreads {
 public:
  explicit WithThreads(int threads) : before_(at::get_num_threads()) { at::set_num_threads(threads); }
  ~WithThreads() { at::set_num_threads(before_); }

 private:
  int before_;
};

TEST(BalancedFor, RunsEveryItemOnceInRangesOfAtMostTheGrain) {
  WithThreads two(2);
  for (const std::int64_t n : {1, 2, 7, 97, 1000})
    for (const std::int64_t grain : {1, 3, 16}) {
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
      std::atomic<bool> too_long{false};
      balanced_for(n, grain, [&](std::int64_t begin, std::int64_t end) {
        if (end - begin > grain || begin >= end) too_long = true;
        for (std::int64_t i = begin; i < end; ++i) ++runs[static_cast<std::size_t>(i)];
      });
      EXPECT_FALSE(too_long) << "n " << n << " grain " << grain;
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << "item " << i << " n " << n << " grain " << grain;
    }
}

TEST(BalancedFor, NoRangeIsLongerThanHalfAShare) {
  WithThreads two(2);
  constexpr std::int64_t n = 40, grain = 16;  // shares [0, 20) and [20, 40): at most 10 a claim
  std::mutex lock;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  balanced_for(n, grain, [&](std::int64_t begin, std::int64_t end) {
    std::lock_guard<std::mutex> guard(lock);
    ranges.push_back({begin, end});
  });
  std::int64_t covered = 0, shortest = n;
  for (const auto& [begin, end] : ranges) {
    EXPECT_LE(end - begin, 10) << "range [" << begin << ", " << end << ")";
    covered += end - begin;
    shortest = std::min(shortest, end - begin);
  }
  EXPECT_EQ(covered, n);
  EXPECT_EQ(shortest, 1) << "a share's last claim is one item";
}

TEST(BalancedFor, AThreadHeldUpHasTheRestOfItsShareTaken) {
  WithThreads two(2);
  constexpr std::int64_t n = 40;  // shares [0, 20) and [20, 40)
  // The owner of the first share stops on its first item until every other item is done,
  // which only the other thread can do: by taking the rest of this share from its back. On a
  // loaded machine the owner may start so late that the other thread has taken its whole
  // share, item 0 included, and the scene never happens: then the run is repeated.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::atomic<std::int64_t> done{0};
    std::mutex lock;
    std::set<std::thread::id> others;
    std::thread::id holder;
    bool held = false, waited_out = false;
    balanced_for(n, 1, [&](std::int64_t begin, std::int64_t end) {
      if (begin == 0) {
        held = done.load() < n - 1;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (done.load() < n - 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
        std::lock_guard<std::mutex> guard(lock);
        holder = std::this_thread::get_id();
        waited_out = done.load() < n - 1;
        return;
      }
      // Items that take a while (and give the core away) let a late owner start in time.
      std::this_thread::sleep_for(std::chrono::microseconds(200 * (end - begin)));
      std::lock_guard<std::mutex> guard(lock);
      others.insert(std::this_thread::get_id());
      done += end - begin;
    });
    EXPECT_EQ(done.load(), n - 1);
    if (!held) continue;
    EXPECT_FALSE(waited_out) << "the other thread did not take the held-up share's items";
    EXPECT_TRUE(std::any_of(others.begin(), others.end(), [&](std::thread::id id) { return id != holder; }));
    return;
  }
  FAIL() << "in 20 runs the first share's owner never reached item 0 before the rest was done";
}

TEST(BalancedFor, EachThreadMakesItsStateOnce) {
  WithThreads two(2);
  std::atomic<int> made{0};
  std::mutex lock;
  std::set<std::pair<int, std::thread::id>> users;  // (state, thread)
  balanced_for(
      200, 2, [&] { return made++; },
      [&](int state, std::int64_t, std::int64_t) {
        std::lock_guard<std::mutex> guard(lock);
        users.insert({state, std::this_thread::get_id()});
      });
  EXPECT_GE(made.load(), 1);
  EXPECT_LE(made.load(), 2);
  std::set<int> states;
  for (const auto& [state, thread] : users) EXPECT_TRUE(states.insert(state).second) << "state " << state << " shared";
}

TEST(BalancedFor, InsideAParallelRegionRunsInOrderOnTheCaller) {
  WithThreads two(2);
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> seen(2);
  at::parallel_for(0, 2, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < last; ++t)
      balanced_for(10, 3, [&](std::int64_t begin, std::int64_t end) { seen[t].push_back({begin, end}); });
  });
  const std::vector<std::pair<std::int64_t, std::int64_t>> in_order{{0, 3}, {3, 6}, {6, 9}, {9, 10}};
  EXPECT_EQ(seen[0], in_order);
  EXPECT_EQ(seen[1], in_order);
}

}  // namespace
}  // namespace strata::attn
