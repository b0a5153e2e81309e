#pragma once
// Token-budget batches (length bucketing): which examples go together in one batch. Pure
// index logic; the caller gathers and pads. A plan is a function of (lengths, options,
// epoch) alone, on every platform: the random choices come from our own splitmix64, not
// from <random>'s distributions, whose output differs between standard libraries.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strata {

struct BatchPlanOptions {
  std::size_t max_tokens = 4096;  // rows × longest length in the batch stays within this
  std::size_t max_rows = 0;       // 0 = no limit
  std::uint64_t seed = 1;
  bool shuffle = true;
};

using BatchPlan = std::vector<std::vector<std::size_t>>;  // indices into `lengths`, per batch

// `lengths[i]` is the padded cost of example i in tokens (for seq2seq, seq2seq_costs() in
// seq2seq_examples.h: source + target); a length of 0 counts as 1. Examples are sorted by
// length and cut greedily into batches with rows × max length <= max_tokens (and rows <=
// max_rows); an example longer than max_tokens forms a batch of its own. Every index
// appears exactly once.
// With shuffle, examples of equal length are ordered at random and the batches are put in
// a random order, both drawn from (seed, epoch); without, ties stay in index order and the
// batches run from shortest to longest (for evaluation, where only padding matters).
// strata::Error when max_tokens is 0.
BatchPlan plan_batches(std::span<const std::size_t> lengths, const BatchPlanOptions& options,
                       std::uint64_t epoch);

// Batches of consecutive examples in their original order, under the same budget: for
// evaluation that streams outputs in input order. Costs more padding than plan_batches.
BatchPlan plan_batches_in_order(std::span<const std::size_t> lengths, std::size_t max_tokens,
                                std::size_t max_rows = 0);

}  // namespace strata
