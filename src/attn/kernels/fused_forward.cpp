// The fused forward: per (batch item, head, query tile), the key tiles of its block-mask row,
// one score tile at a time with an online softmax (running max and sum, FlashAttention
// style), so memory stays O(tile²) whatever the length.
//
// Top-p heads (spec.h: TopP) need every column's mass before any weight is final, since the
// keys kept depend on the key impact of all queries. They run in three steps, each weight's
// score computed once in the first:
//   1. per query tile, the scores of its whole row of visible tiles are kept (O(q_tile × N)
//      per thread), so the row's exact max, log-sum-exp and weights P come from them, then
//      the column sums of P over the voting (real) queries (the key impact, summed per chunk
//      of query tiles in a fixed order) and the untruncated output P V;
//   2. the impact summed over the chunks, and the keys kept (select_keys);
//   3. the output corrected by the keys on the smaller side: minus P V over the truncated
//      keys that some query saw, or, when those are the majority, recomputed as P V over the
//      kept ones, scores computed for those keys alone (gathered).
// With p near 1 few keys are truncated, so the cost is one pass of plain attention plus the
// column sums and the few truncated keys' scores; before, every score was computed three
// times.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "fused_passes.h"
#include "fused_tiles.h"
#include "prefetch.h"
#include "strata/attn/balanced_for.h"
#include "strata/attn/tile_gemm.h"

namespace strata::attn {

namespace {

template <class T>
class Forward {
 public:
  Forward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<T>& out, T* lse, T* keep)
      : p_(plan), in_(in), out_(out), lse_(lse), keep_(keep) {}

  void run() {
    const std::int64_t tasks = p_.batch * p_.heads * p_.mask.q_tiles;
    // Every head's output but the top-p ones'. A thread runs neighbouring tasks one after
    // another (its share from the front, taken ones from the back of another's), so its
    // transposed head is reused over that head's query tiles.
    balanced_for(
        tasks, 1, [&] { return Scratch{ScoreTile<T>(p_), RowStats(p_.mask.q_tile)}; },
        [&](Scratch& scratch, std::int64_t begin, std::int64_t end) {
          for (std::int64_t t = begin; t < end; ++t) {
            const auto [b, h, qt] = split(t);
            if (p_.head[h].fixed())
              fixed_rows(b, h, qt);
            else if (!is_top_p(h))
              softmax_rows(scratch, b, h, qt);
          }
        });
    if (p_.any_top_p) top_p();
  }

 private:
  struct Task {
    std::int64_t b, h, qt;
  };
  struct RowStats {
    explicit RowStats(std::int64_t rows) : max(rows), sum(rows), rescale(rows), written(rows) {}
    std::vector<T> max, sum, rescale;
    std::vector<std::uint8_t> written;  // the output rows a product has written
  };
  struct Scratch {
    ScoreTile<T> tile;
    RowStats stats;
    HeadCopy<T> values;
  };

  Task split(std::int64_t t) const {
    const std::int64_t qts = p_.mask.q_tiles;
    return {t / (p_.heads * qts), (t / qts) % p_.heads, t % qts};
  }
  bool is_top_p(std::int64_t h) const {
    return !p_.head[h].fixed() && p_.head[h].normaliser == NormaliserKind::TopP;
  }
  std::int64_t bh(std::int64_t b, std::int64_t h) const { return b * p_.heads + h; }
  // The output's rows [i0, i0 + rows) of head (b, h), zeroed: the caller leaves the output
  // unset, and each task clears its own rows, in parallel, before it adds to them.
  T* zeroed_out(std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t rows) const {
    T* o = out_.at(b, h, i0);
    zero_rows(o, out_.ld(), rows, p_.dim);
    return o;
  }

  // A fixed head copies its key's value, times dropout's factor (or leaves zeros); its lse
  // is unused.
  void fixed_rows(std::int64_t b, std::int64_t h, std::int64_t qt) {
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim;
    zeroed_out(b, h, i0, rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      lse_[bh(b, h) * p_.lq + i0 + r] = 0;
      const std::int64_t key = p_.rules.fixed_key(b, h, i0 + r);
      if (key < 0) continue;
      const T factor = p_.dropout_factor<T>(b, h, i0 + r, key);
      const T* v = in_.v.at(b, h, key);
      T* o = out_.at(b, h, i0 + r);
      for (std::int64_t c = 0; c < d; ++c) o[c] = v[c] * factor;
    }
  }

  // The online softmax over the row's key tiles.
  void softmax_rows(Scratch& scratch, std::int64_t b, std::int64_t h, std::int64_t qt) {
    ScoreTile<T>& tile = scratch.tile;
    RowStats& stats = scratch.stats;
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim;
    const HeadRows<const T> v = scratch.values.of(in_.v, b, h, p_.keys, d);
    const std::int64_t row = p_.mask_row(b, h, qt), ld = tile.ld(), ldo = out_.ld();
    T* o = out_.at(b, h, i0);
    if (qt + 1 < p_.mask.q_tiles)  // the next task's queries, read from memory while this one runs
      prefetch_rows(in_.q.at(b, h, p_.q_begin(qt + 1)), in_.q.ld(), p_.q_rows(qt + 1), d);
    std::fill_n(stats.max.begin(), rows, -std::numeric_limits<T>::infinity());
    std::fill_n(stats.sum.begin(), rows, T(0));
    std::fill_n(stats.written.begin(), rows, std::uint8_t{0});
    for (std::int64_t e = p_.mask.row_begin[row]; e < p_.mask.row_begin[row + 1]; ++e) {
      const std::int64_t tile_n0 = p_.k_begin(p_.mask.tile[e]);
      for (const Strip& strip : tile.strips(b, h, qt, e)) {
        const std::int64_t r0 = strip.r0, strip_rows = strip.rows, n0 = tile_n0 + strip.lo, cols = strip.cols;
        tile.compute_strip(in_, b, h, strip);
        T* s = tile.scores();
        T* strip_o = o + r0 * ldo;
        tiles::online_softmax(s, ld, strip_rows, cols, stats.max.data() + r0, stats.sum.data() + r0,
                              stats.rescale.data() + r0);
        // Dropout thins the weights that meet V, not the normaliser's sum.
        tile.thin_weights(s, b, h, i0 + r0, strip_rows, n0, cols);
        // Rows already written are rescaled, then added to; fresh ones are written.
        const auto add_pv = [&](std::int64_t m0, std::int64_t m1, T beta) {
          if (beta != T(0)) tiles::scale_rows(strip_o + m0 * ldo, ldo, m1 - m0, d, stats.rescale.data() + r0 + m0);
          gemm(false, m1 - m0, d, cols, T(1), s + m0 * ld, ld, v.at(0, 0, n0), v.ld(), beta,
               strip_o + m0 * ldo, ldo);
        };
        into_rows(strip_o, ldo, d, stats.written.data() + r0, strip_rows, add_pv);
      }
    }
    zero_unwritten(o, ldo, d, stats.written.data(), rows);
    T* lse = lse_ + bh(b, h) * p_.lq + i0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool sees = stats.sum[r] > 0;
      lse[r] = sees ? stats.max[r] + std::log(stats.sum[r]) : std::numeric_limits<T>::infinity();
      stats.rescale[r] = sees ? T(1) / stats.sum[r] : T(0);
    }
    tiles::scale_rows(o, ldo, rows, d, stats.rescale.data());
  }

  // ---- top-p heads ------------------------------------------------------------------

  // Query tiles per chunk: a fixed number of chunks per (b, h), whatever the thread count,
  // so the impact sums, and the keys kept, do not depend on it.
  static constexpr std::int64_t kChunkTasks = 64;

  // What a thread needs for the rows of one query tile of a top-p head.
  struct TopPScratch {
    TopPScratch(const FusedPlan& p, std::int64_t entries)
        : scores(static_cast<std::size_t>(std::max<std::int64_t>(entries, 1) * p.mask.q_tile *
                                          p.mask.k_tile)),
          max(p.mask.q_tile), sum(p.mask.q_tile), inverse(p.mask.q_tile) {}
    std::vector<T> scores;  // the row's visible tiles, [entry][q_tile][k_tile]
    std::vector<T> max, sum, inverse;
  };

  // The keys step 3 runs over for one (b, h): sorted, and whether they are subtracted (the
  // truncated ones) or make the output alone (the kept ones).
  struct Correction {
    std::vector<std::int64_t> keys;
    bool subtract = true;
  };

  void top_p() {
    const BlockMask& m = p_.mask;
    const std::int64_t pairs = p_.batch * p_.heads;
    const std::int64_t chunks = std::clamp<std::int64_t>((kChunkTasks + pairs - 1) / pairs, 1,
                                                         std::max<std::int64_t>(m.q_tiles, 1));
    std::int64_t entries = 0;  // the most tiles of any block-mask row
    for (std::size_t r = 0; r + 1 < m.row_begin.size(); ++r)
      entries = std::max(entries, m.row_begin[r + 1] - m.row_begin[r]);

    // Step 1: weights, output before truncation, impact per chunk. Padded queries do not
    // vote; what they see is summed apart, so that step 3 still corrects their rows.
    std::vector<T> impact(static_cast<std::size_t>(pairs * chunks * p_.keys), T(0));
    std::vector<T> unvoted(p_.votes ? impact.size() : 0, T(0));
    at::parallel_for(0, pairs * chunks, 1, [&](std::int64_t begin, std::int64_t end) {
      ScoreTile<T> tile(p_);
      TopPScratch scratch(p_, entries);
      for (std::int64_t t = begin; t < end; ++t) {
        const std::int64_t bh = t / chunks, c = t % chunks;
        const std::int64_t b = bh / p_.heads, h = bh % p_.heads;
        if (!is_top_p(h)) continue;
        T* sums = impact.data() + t * p_.keys;
        T* unvoted_sums = p_.votes ? unvoted.data() + t * p_.keys : nullptr;
        for (std::int64_t qt = c * m.q_tiles / chunks; qt < (c + 1) * m.q_tiles / chunks; ++qt)
          top_p_rows(tile, scratch, b, h, qt, sums, unvoted_sums);
      }
    });

    // Step 2: the keys kept, and the keys step 3 corrects the output by.
    std::vector<Correction> corrections(static_cast<std::size_t>(pairs));
    at::parallel_for(0, pairs, 1, [&](std::int64_t begin, std::int64_t end) {
      std::vector<std::int64_t> order(p_.keys);
      for (std::int64_t bh = begin; bh < end; ++bh) {
        if (!is_top_p(bh % p_.heads)) continue;
        T* total = impact.data() + bh * chunks * p_.keys;
        for (std::int64_t c = 1; c < chunks; ++c)
          tiles::add(total, 0, total + c * p_.keys, 0, 1, p_.keys);
        T* keep = keep_ + bh * p_.keys;
        select_keys(total, p_.head[bh % p_.heads].top_p, order, keep);
        // Keys no query saw carry no weight either way.
        auto seen = [&](std::int64_t n) {
          if (total[n] > 0) return true;
          if (p_.votes == nullptr) return false;
          for (std::int64_t c = 0; c < chunks; ++c)
            if (unvoted[(bh * chunks + c) * p_.keys + n] > 0) return true;
          return false;
        };
        std::vector<std::int64_t> truncated, kept;
        for (std::int64_t n = 0; n < p_.keys; ++n)
          if (seen(n)) (keep[n] == T(1) ? kept : truncated).push_back(n);
        Correction& fix = corrections[static_cast<std::size_t>(bh)];
        fix.subtract = truncated.size() <= kept.size();
        fix.keys = fix.subtract ? std::move(truncated) : std::move(kept);
      }
    });

    // Step 3: the output over the kept keys only.
    at::parallel_for(0, pairs * m.q_tiles, 1, [&](std::int64_t begin, std::int64_t end) {
      ScoreTile<T> tile(p_);
      std::vector<std::int64_t> key(static_cast<std::size_t>(m.k_tile));
      std::vector<std::uint8_t> check(static_cast<std::size_t>(m.k_tile));
      std::vector<T> values(static_cast<std::size_t>(m.k_tile * p_.dim));
      for (std::int64_t t = begin; t < end; ++t) {
        const auto [b, h, qt] = split(t);
        if (!is_top_p(h)) continue;
        const Correction& fix = corrections[static_cast<std::size_t>(bh(b, h))];
        if (fix.subtract && fix.keys.empty()) continue;
        correct_rows(tile, fix, key, check, values, b, h, qt);
      }
    });
  }

  // Step 1 for one query tile: its row's scores kept, so max, log-sum-exp and P = exp(s -
  // lse) come from one computation of each score. The column sums of P go to `sums` for the
  // voting queries, to `unvoted_sums` for the others (null when every query votes).
  void top_p_rows(ScoreTile<T>& tile, TopPScratch& scratch, std::int64_t b, std::int64_t h,
                  std::int64_t qt, T* sums, T* unvoted_sums) {
    const BlockMask& m = p_.mask;
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim, ld = tile.ld();
    const std::int64_t row = p_.mask_row(b, h, qt);
    const std::int64_t first = m.row_begin[row], count = m.row_begin[row + 1] - first;
    const std::int64_t stride = m.q_tile * ld;
    auto n0_of = [&](std::int64_t e) { return p_.k_begin(m.tile[first + e]); };
    auto cols_of = [&](std::int64_t e) { return p_.k_cols(m.tile[first + e]); };
    T* max = scratch.max.data();
    T* sum = scratch.sum.data();
    std::fill_n(max, rows, -std::numeric_limits<T>::infinity());
    std::fill_n(sum, rows, T(0));
    for (std::int64_t e = 0; e < count; ++e) {
      T* s = scratch.scores.data() + e * stride;
      tile.compute_into(s, in_, b, h, i0, rows, n0_of(e), cols_of(e), !m.full[first + e]);
      tiles::max_rows(s, ld, rows, cols_of(e), max);
    }
    for (std::int64_t e = 0; e < count; ++e)
      tiles::exp_shift_sum_rows(scratch.scores.data() + e * stride, ld, rows, cols_of(e), max, sum);
    T* lse = lse_ + bh(b, h) * p_.lq + i0;
    T* inverse = scratch.inverse.data();
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool sees = sum[r] > 0;
      lse[r] = sees ? max[r] + std::log(sum[r]) : std::numeric_limits<T>::infinity();
      inverse[r] = sees ? T(1) / sum[r] : T(0);
    }
    T* o = zeroed_out(b, h, i0, rows);
    const std::uint8_t* votes = p_.votes ? p_.votes + b * p_.lq + i0 : nullptr;
    for (std::int64_t e = 0; e < count; ++e) {
      T* s = scratch.scores.data() + e * stride;
      const std::int64_t n0 = n0_of(e), cols = cols_of(e);
      tiles::scale_rows(s, ld, rows, cols, inverse);
      if (votes == nullptr)
        tiles::add_column_sums(s, ld, rows, cols, sums + n0);
      else
        for (std::int64_t r = 0; r < rows; ++r)
          tiles::add_column_sums(s + r * ld, ld, 1, cols, (votes[r] ? sums : unvoted_sums) + n0);
      // Dropout thins the weights that meet V, not the impact.
      tile.thin_weights(s, b, h, i0, rows, n0, cols);
      gemm(false, rows, d, cols, T(1), s, ld, in_.v.at(b, h, n0), in_.v.ld(), T(1), o, out_.ld());
    }
  }

  // Step 3 for one query tile: the output minus P V over the truncated keys its rows see, or
  // P V over the kept keys alone, in batches of up to a key tile of gathered keys.
  void correct_rows(ScoreTile<T>& tile, const Correction& fix, std::vector<std::int64_t>& key,
                    std::vector<std::uint8_t>& check, std::vector<T>& values, std::int64_t b,
                    std::int64_t h, std::int64_t qt) {
    const BlockMask& m = p_.mask;
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim, ld = tile.ld();
    const std::int64_t row = p_.mask_row(b, h, qt);
    const T* lse = lse_ + bh(b, h) * p_.lq + i0;
    T* o = fix.subtract ? out_.at(b, h, i0) : zeroed_out(b, h, i0, rows);
    const T sign = fix.subtract ? T(-1) : T(1);
    std::int64_t count = 0;
    auto flush = [&] {
      if (count == 0) return;
      tile.compute_keys(in_, b, h, i0, rows, key.data(), check.data(), count);
      T* s = tile.scores();
      tiles::exp_minus_rows(s, ld, rows, count, lse);
      if (p_.dropout > 0)
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < count; ++c)
            s[r * ld + c] *= p_.dropout_factor<T>(b, h, i0 + r, key[c]);
      for (std::int64_t c = 0; c < count; ++c)
        std::copy_n(in_.v.at(b, h, key[c]), d, values.data() + c * d);
      gemm(false, rows, d, count, sign, s, ld, values.data(), d, T(1), o, out_.ld());
      count = 0;
    };
    std::size_t next = 0;
    for (std::int64_t e = m.row_begin[row]; e < m.row_begin[row + 1]; ++e) {
      const std::int64_t n0 = p_.k_begin(m.tile[e]), n1 = n0 + p_.k_cols(m.tile[e]);
      while (next < fix.keys.size() && fix.keys[next] < n0) ++next;
      for (; next < fix.keys.size() && fix.keys[next] < n1; ++next) {
        key[count] = fix.keys[next];
        check[count] = !m.full[e];
        if (++count == m.k_tile) flush();
      }
    }
    flush();
  }

  // The fewest keys with the largest impact whose normalised impact sums to at least p
  // (at least one); ties go to the lower key index.
  void select_keys(const T* impact, double p, std::vector<std::int64_t>& order, T* keep) const {
    double total = 0;
    for (std::int64_t n = 0; n < p_.keys; ++n) total += impact[n];
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t x, std::int64_t y) { return impact[x] > impact[y]; });
    if (!(total > 0)) return;  // no query sees any key: nothing to keep
    double mass = 0;
    for (std::int64_t n : order) {
      keep[n] = 1;
      mass += impact[n] / total;
      if (mass >= p) break;
    }
  }

  const FusedPlan& p_;
  const FusedInputs<T>& in_;
  const HeadRows<T>& out_;
  T* lse_;
  T* keep_;
};

}  // namespace

template <class T>
void fused_forward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<T>& out, T* lse,
                   T* keep) {
  Forward<T>(plan, in, out, lse, keep).run();
}

template void fused_forward<float>(const FusedPlan&, const FusedInputs<float>&, const HeadRows<float>&,
                                   float*, float*);
template void fused_forward<double>(const FusedPlan&, const FusedInputs<double>&,
                                    const HeadRows<double>&, double*, double*);

}  // namespace strata::attn
