// rougeN: clipped n-gram overlap. N-grams become 64-bit keys that are equal exactly when
// the n-grams are, counted in a flat table: no map of strings or tuples.
#include <algorithm>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

// Replaces every key of both lists by its rank among the distinct keys of the two, which
// keeps keys below 2^32 so that one more token id fits beside them.
void compact(std::vector<std::uint64_t>& a, std::vector<std::uint64_t>& b,
             std::vector<std::uint64_t>& distinct) {
  distinct.assign(a.begin(), a.end());
  distinct.insert(distinct.end(), b.begin(), b.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (auto* keys : {&a, &b}) {
    for (std::uint64_t& key : *keys) {
      key = static_cast<std::uint64_t>(std::lower_bound(distinct.begin(), distinct.end(), key) -
                                       distinct.begin());
    }
  }
}

// Turns the keys of the (length - 1)-grams of `ids` into keys of its length-grams.
void extend(std::vector<std::uint64_t>& keys, std::span<const std::int32_t> ids,
            std::size_t length) {
  const std::size_t count = ids.size() >= length ? ids.size() - length + 1 : 0;
  for (std::size_t i = 0; i < count; ++i) {
    keys[i] = (keys[i] << 32) | static_cast<std::uint32_t>(ids[i + length - 1]);
  }
  keys.resize(count);
}

// Sum over distinct keys of min(count in target, count in prediction): the target's keys
// are counted in a small open-addressing table, then each prediction key takes one off its
// count while any is left.
std::size_t clipped_overlap(std::span<const std::uint64_t> target,
                            std::span<const std::uint64_t> prediction) {
  thread_local std::vector<std::uint64_t> keys;
  thread_local std::vector<std::int32_t> counts;  // -1: empty slot
  int bits = 4;
  while ((std::size_t{1} << bits) < 2 * target.size()) ++bits;
  const std::size_t mask = (std::size_t{1} << bits) - 1;
  keys.resize(mask + 1);
  counts.assign(mask + 1, -1);
  const auto slot_of = [&](std::uint64_t key) {
    std::size_t i = (key * 0x9E3779B97F4A7C15ULL) >> (64 - bits);  // Fibonacci hashing
    while (counts[i] >= 0 && keys[i] != key) i = (i + 1) & mask;
    return i;
  };
  for (const std::uint64_t key : target) {
    const std::size_t i = slot_of(key);
    if (counts[i] < 0) {
      keys[i] = key;
      counts[i] = 0;
    }
    ++counts[i];
  }
  std::size_t overlap = 0;
  for (const std::uint64_t key : prediction) {
    const std::size_t i = slot_of(key);
    if (counts[i] > 0) {
      --counts[i];
      ++overlap;
    }
  }
  return overlap;
}

}  // namespace

RougeScore RougeScore::from_counts(std::size_t hits, std::size_t prediction_total,
                                   std::size_t target_total) {
  RougeScore score;
  score.precision =
      static_cast<double>(hits) / static_cast<double>(std::max<std::size_t>(prediction_total, 1));
  score.recall =
      static_cast<double>(hits) / static_cast<double>(std::max<std::size_t>(target_total, 1));
  const double sum = score.precision + score.recall;
  score.fmeasure = sum > 0 ? 2 * score.precision * score.recall / sum : 0.0;
  return score;
}

RougeScore rouge_n(const TokenizedPair& pair, int n) {
  if (n < 1) throw Error("rougeN needs n >= 1, got " + std::to_string(n));
  const std::span<const std::int32_t> target = pair.target.ids, prediction = pair.prediction.ids;
  thread_local std::vector<std::uint64_t> target_keys, prediction_keys, distinct;
  target_keys.assign(target.begin(), target.end());
  prediction_keys.assign(prediction.begin(), prediction.end());
  for (std::size_t length = 2; length <= static_cast<std::size_t>(n); ++length) {
    if (length > 2) compact(target_keys, prediction_keys, distinct);
    extend(target_keys, target, length);
    extend(prediction_keys, prediction, length);
  }
  return RougeScore::from_counts(clipped_overlap(target_keys, prediction_keys),
                                 prediction_keys.size(), target_keys.size());
}

}  // namespace strata
