// rougeL and rougeLsum: longest common subsequences, computed bit-parallel (Hyyrö 2004).
//
// For a text a against a text b, the LCS table T[i][j] = LCS(a[0..i), b[0..j)) is kept one
// row at a time as bits over b's positions: bit j of row i is 0 exactly when
// T[i][j + 1] = T[i][j] + 1, so T[i][j] is the number of 0 bits below bit j. Each token of a
// costs |b| / 64 word operations instead of |b| table cells. All buffers are per-thread and
// only grow, so nothing is allocated per cell or per call.
#include <algorithm>
#include <vector>

#include "strata/eval/rouge.h"

namespace strata {

namespace {

using Ids = std::span<const std::int32_t>;
using Row = std::span<std::uint64_t>;

std::size_t words_for(std::size_t bits) { return (bits + 63) / 64; }

// Where each token occurs in a sequence, as linked lists: first_[t] is the first position of
// token t and next_[j] the next position after j holding the same token; -1 ends a list.
class Occurrences {
 public:
  // Indexes `sequence`, whose ids are below `distinct`.
  void index(Ids sequence, std::size_t distinct) {
    if (first_.size() < distinct) first_.resize(distinct, -1);
    next_.resize(sequence.size());
    for (std::size_t j = sequence.size(); j-- > 0;) {
      next_[j] = first_[sequence[j]];
      first_[sequence[j]] = static_cast<std::int32_t>(j);
    }
  }
  // Forgets `sequence`, the one indexed last, leaving every list empty.
  void clear(Ids sequence) {
    for (const std::int32_t token : sequence) first_[token] = -1;
  }
  bool occurs(std::int32_t token) const { return first_[token] >= 0; }
  template <class Visit>
  void for_each(std::int32_t token, Visit visit) const {
    for (std::int32_t j = first_[token]; j >= 0; j = next_[j]) visit(static_cast<std::size_t>(j));
  }

 private:
  std::vector<std::int32_t> first_, next_;
};

// Row i -> row i + 1 of the table for the next token of a, given where tokens occur in b.
// V' = (V + U) | (V - U) with U = V & matches, where V - U = V & ~matches as U's bits are
// V's. `scratch` has the row's size and is all zero before and after.
void advance(Row row, std::int32_t token, const Occurrences& in_b, Row scratch) {
  if (!in_b.occurs(token)) return;  // no match: the row stays the same
  in_b.for_each(token, [&](std::size_t j) { scratch[j / 64] |= std::uint64_t{1} << (j % 64); });
  std::uint64_t carry = 0;
  for (std::size_t w = 0; w < row.size(); ++w) {
    const std::uint64_t v = row[w], matches = scratch[w];
    const std::uint64_t with_carry = v + carry;
    const std::uint64_t sum = with_carry + (v & matches);
    carry = (with_carry < carry) | (sum < (v & matches));
    row[w] = sum | (v & ~matches);
    scratch[w] = 0;
  }
}

// Bits set in x. Written out because std::popcount becomes a library call on baseline
// x86-64 (no -mpopcnt), and the read-out below counts bits at every step.
std::size_t count_ones(std::uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<std::size_t>((x * 0x0101010101010101ULL) >> 56);
}

// T[i][j] from row i: the number of 0 bits below bit j.
std::size_t zeros_below(std::span<const std::uint64_t> row, std::size_t j) {
  std::size_t zeros = 0;
  for (std::size_t w = 0; w < j / 64; ++w) zeros += count_ones(~row[w]);
  if (j % 64 != 0) zeros += count_ones(~row[j / 64] & ((std::uint64_t{1} << (j % 64)) - 1));
  return zeros;
}

// Sets marked[i] for each position i of `reference` on the LCS with `candidate` that
// rouge-score reads out (_backtrack_norec) from the table: from the end, take a match;
// otherwise step along the candidate only when that keeps a strictly longer LCS, else along
// the reference. Which LCS is read out changes the union, so this tie-break is part of the
// metric. The whole table is kept: (|reference| + 1) rows of |candidate| bits.
void mark_lcs(Ids reference, Ids candidate, const Occurrences& in_candidate, char* marked) {
  thread_local std::vector<std::uint64_t> rows, scratch;
  const std::size_t words = words_for(candidate.size());
  rows.assign((reference.size() + 1) * words, ~std::uint64_t{0});
  scratch.assign(words, 0);
  const auto row = [&](std::size_t i) { return Row(rows).subspan(i * words, words); };
  for (std::size_t i = 0; i < reference.size(); ++i) {
    std::copy_n(row(i).begin(), words, row(i + 1).begin());
    advance(row(i + 1), reference[i], in_candidate, scratch);
  }
  const auto T = [&](std::size_t i, std::size_t j) { return zeros_below(row(i), j); };
  std::size_t i = reference.size(), j = candidate.size();
  while (i > 0 && j > 0) {
    if (reference[i - 1] == candidate[j - 1]) {
      marked[i - 1] = 1;
      --i;
      --j;
    } else if (T(i, j - 1) > T(i - 1, j)) {
      --j;
    } else {
      --i;
    }
  }
}

// The sentences of a text: sentence k ends at sentence_ends[k].
Ids sentence(const TokenizedText& text, std::size_t k) {
  const std::size_t begin = k == 0 ? 0 : text.sentence_ends[k - 1];
  return Ids(text.ids).subspan(begin, text.sentence_ends[k] - begin);
}

}  // namespace

RougeScore rouge_l(const TokenizedPair& pair) {
  const Ids target = pair.target.ids, prediction = pair.prediction.ids;
  if (target.empty() || prediction.empty()) return {};
  thread_local Occurrences in_prediction;
  thread_local std::vector<std::uint64_t> row, scratch;
  in_prediction.index(prediction, pair.distinct);
  row.assign(words_for(prediction.size()), ~std::uint64_t{0});
  scratch.assign(row.size(), 0);
  for (const std::int32_t token : target) advance(row, token, in_prediction, scratch);
  in_prediction.clear(prediction);
  return RougeScore::from_counts(zeros_below(row, prediction.size()), prediction.size(),
                                 target.size());
}

RougeScore rouge_lsum(const TokenizedPair& pair) {
  const TokenizedText& target = pair.target;
  const TokenizedText& prediction = pair.prediction;
  if (target.ids.empty() || prediction.ids.empty()) return {};
  thread_local Occurrences in_candidate;
  thread_local std::vector<char> marked;
  thread_local std::vector<std::int32_t> target_left, prediction_left;

  // marked[i]: target position i is in the union of the LCS of its sentence with each
  // prediction sentence. Each prediction sentence is indexed once for all target sentences.
  marked.assign(target.ids.size(), 0);
  for (std::size_t c = 0; c < prediction.sentence_ends.size(); ++c) {
    const Ids candidate = sentence(prediction, c);
    if (candidate.empty()) continue;
    in_candidate.index(candidate, pair.distinct);
    for (std::size_t r = 0, begin = 0; r < target.sentence_ends.size(); ++r) {
      const Ids reference = sentence(target, r);
      mark_lcs(reference, candidate, in_candidate, marked.data() + begin);
      begin += reference.size();
    }
    in_candidate.clear(candidate);
  }

  // Hits in order of target position, each token counted at most as often as it is left on
  // both sides (rouge-score's token_cnts_r / token_cnts_c).
  target_left.assign(pair.distinct, 0);
  prediction_left.assign(pair.distinct, 0);
  for (const std::int32_t token : target.ids) ++target_left[token];
  for (const std::int32_t token : prediction.ids) ++prediction_left[token];
  std::size_t hits = 0;
  for (std::size_t i = 0; i < target.ids.size(); ++i) {
    const std::int32_t token = target.ids[i];
    if (marked[i] && target_left[token] > 0 && prediction_left[token] > 0) {
      ++hits;
      --target_left[token];
      --prediction_left[token];
    }
  }
  return RougeScore::from_counts(hits, prediction.ids.size(), target.ids.size());
}

}  // namespace strata
