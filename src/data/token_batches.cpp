#include "strata/data/token_batches.h"

#include <algorithm>
#include <numeric>
#include <tuple>
#include <utility>

#include "strata/core/error.h"

namespace strata {

namespace {

std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class EpochRng {
 public:
  EpochRng(std::uint64_t seed, std::uint64_t epoch)
      : state_(mix64(seed) ^ mix64(epoch + 0x632BE59BD9B4E019ULL)) {}
  std::uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ULL); }
  // Uniform in [0, n) for n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;)
      if (const std::uint64_t x = next(); x >= threshold) return x % n;
  }

 private:
  std::uint64_t state_;
};

std::size_t cost(std::size_t length) { return std::max<std::size_t>(length, 1); }

// Cuts `order` greedily: a batch closes when one more row would break the budget.
BatchPlan cut(const std::vector<std::size_t>& order, std::span<const std::size_t> lengths,
              std::size_t max_tokens, std::size_t max_rows) {
  if (max_tokens == 0) throw Error("batch plan: max_tokens must be at least 1");
  BatchPlan plan;
  std::vector<std::size_t> batch;
  std::size_t longest = 0;
  for (std::size_t index : order) {
    const std::size_t wider = std::max(longest, cost(lengths[index]));
    const bool full = (batch.size() + 1) * wider > max_tokens ||
                      (max_rows > 0 && batch.size() + 1 > max_rows);
    if (!batch.empty() && full) {
      plan.push_back(std::move(batch));
      batch.clear();
      longest = 0;
    }
    batch.push_back(index);
    longest = std::max(longest, cost(lengths[index]));
  }
  if (!batch.empty()) plan.push_back(std::move(batch));
  return plan;
}

}  // namespace

BatchPlan plan_batches(std::span<const std::size_t> lengths, const BatchPlanOptions& options,
                       std::uint64_t epoch) {
  const std::size_t n = lengths.size();
  EpochRng rng(options.seed, epoch);
  std::vector<std::uint64_t> tie(n);
  if (options.shuffle)
    for (std::uint64_t& key : tie) key = rng.next();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tuple(cost(lengths[a]), tie[a], a) < std::tuple(cost(lengths[b]), tie[b], b);
  });
  BatchPlan plan = cut(order, lengths, options.max_tokens, options.max_rows);
  if (options.shuffle)
    for (std::size_t i = plan.size(); i > 1; --i) std::swap(plan[i - 1], plan[rng.below(i)]);
  return plan;
}

BatchPlan plan_batches_in_order(std::span<const std::size_t> lengths, std::size_t max_tokens,
                                std::size_t max_rows) {
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  return cut(order, lengths, max_tokens, max_rows);
}

}  // namespace strata
