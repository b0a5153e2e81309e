// The fused forward: per (batch item, head, query tile), the key tiles of its block-mask row,
// one score tile at a time with an online softmax (running max and sum, FlashAttention
// style), so memory stays O(tile²) whatever the length. Top-p heads need the whole column
// mass before any weight is final, so they take three passes: log-sum-exp, key impact,
// output.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "fused_passes.h"
#include "fused_tiles.h"

namespace strata::attn {

namespace {

template <class T>
class Forward {
 public:
  Forward(const FusedPlan& plan, const FusedInputs<T>& in, T* out, T* lse, T* keep)
      : p_(plan), in_(in), out_(out), lse_(lse), keep_(keep) {}

  void run() {
    const std::int64_t tasks = p_.batch * p_.heads * p_.mask.q_tiles;
    // Pass 1: every head's output, or a top-p head's log-sum-exp only.
    at::parallel_for(0, tasks, 1, [&](std::int64_t begin, std::int64_t end) {
      ScoreTile<T> tile(p_);
      RowStats stats(p_.mask.q_tile);
      for (std::int64_t t = begin; t < end; ++t) {
        const auto [b, h, qt] = split(t);
        if (p_.head[h].fixed())
          fixed_rows(b, h, qt);
        else
          softmax_rows(tile, stats, b, h, qt, !is_top_p(h));
      }
    });
    if (!p_.any_top_p) return;
    top_p_keep();
    // Pass 3: top-p heads' outputs, weights exp(s - lse) * keep.
    at::parallel_for(0, tasks, 1, [&](std::int64_t begin, std::int64_t end) {
      ScoreTile<T> tile(p_);
      for (std::int64_t t = begin; t < end; ++t) {
        const auto [b, h, qt] = split(t);
        if (is_top_p(h)) kept_rows(tile, b, h, qt);
      }
    });
  }

 private:
  struct Task {
    std::int64_t b, h, qt;
  };
  struct RowStats {
    explicit RowStats(std::int64_t rows) : max(rows), sum(rows), rescale(rows) {}
    std::vector<T> max, sum, rescale;
  };

  Task split(std::int64_t t) const {
    const std::int64_t qts = p_.mask.q_tiles;
    return {t / (p_.heads * qts), (t / qts) % p_.heads, t % qts};
  }
  bool is_top_p(std::int64_t h) const {
    return !p_.head[h].fixed() && p_.head[h].normaliser == NormaliserKind::TopP;
  }
  std::int64_t bh(std::int64_t b, std::int64_t h) const { return b * p_.heads + h; }
  T* out_rows(std::int64_t b, std::int64_t h, std::int64_t i0) const {
    return out_ + (bh(b, h) * p_.lq + i0) * p_.dim;
  }
  const T* v_rows(std::int64_t b, std::int64_t h, std::int64_t n0) const {
    return in_.v + (bh(b, h) * p_.keys + n0) * p_.dim;
  }

  // A fixed head copies its key's value, times dropout's factor (or leaves zeros); its lse
  // is unused.
  void fixed_rows(std::int64_t b, std::int64_t h, std::int64_t qt) {
    const std::int64_t i0 = qt * p_.mask.q_tile, rows = p_.q_rows(qt), d = p_.dim;
    for (std::int64_t r = 0; r < rows; ++r) {
      lse_[bh(b, h) * p_.lq + i0 + r] = 0;
      const std::int64_t key = p_.rules.fixed_key(b, h, i0 + r);
      if (key < 0) continue;
      const T factor = p_.dropout_factor<T>(b, h, i0 + r, key);
      const T* v = v_rows(b, h, key);
      T* o = out_rows(b, h, i0 + r);
      for (std::int64_t c = 0; c < d; ++c) o[c] = v[c] * factor;
    }
  }

  // The online softmax over the row's key tiles. With `write_output` false only the
  // log-sum-exp is produced (top-p's first pass).
  void softmax_rows(ScoreTile<T>& tile, RowStats& stats, std::int64_t b, std::int64_t h,
                    std::int64_t qt, bool write_output) {
    const std::int64_t i0 = qt * p_.mask.q_tile, rows = p_.q_rows(qt), d = p_.dim;
    const std::int64_t row = p_.mask_row(b, h, qt), ld = tile.ld();
    T* o = out_rows(b, h, i0);
    std::fill_n(stats.max.begin(), rows, -std::numeric_limits<T>::infinity());
    std::fill_n(stats.sum.begin(), rows, T(0));
    for (std::int64_t e = p_.mask.row_begin[row]; e < p_.mask.row_begin[row + 1]; ++e) {
      const std::int64_t n0 = p_.mask.tile[e] * p_.mask.k_tile, cols = p_.k_cols(p_.mask.tile[e]);
      tile.compute(in_, b, h, i0, rows, n0, cols, !p_.mask.full[e]);
      T* s = tile.scores();
      tiles::online_softmax(s, ld, rows, cols, stats.max.data(), stats.sum.data(),
                            stats.rescale.data());
      if (!write_output) continue;
      tiles::scale_rows(o, d, rows, d, stats.rescale.data());
      // Dropout thins the weights that meet V, not the normaliser's sum.
      if (tile.weight_factors(b, h, i0, rows, n0, cols, nullptr))
        tiles::multiply(s, ld, tile.factors(), ld, rows, cols);
      gemm(false, false, rows, d, cols, T(1), s, ld, v_rows(b, h, n0), d, T(1), o, d);
    }
    T* lse = lse_ + bh(b, h) * p_.lq + i0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const bool sees = stats.sum[r] > 0;
      lse[r] = sees ? stats.max[r] + std::log(stats.sum[r]) : std::numeric_limits<T>::infinity();
      stats.rescale[r] = sees ? T(1) / stats.sum[r] : T(0);
    }
    if (write_output) tiles::scale_rows(o, d, rows, d, stats.rescale.data());
  }

  void kept_rows(ScoreTile<T>& tile, std::int64_t b, std::int64_t h, std::int64_t qt) {
    const std::int64_t i0 = qt * p_.mask.q_tile, rows = p_.q_rows(qt), d = p_.dim;
    const std::int64_t row = p_.mask_row(b, h, qt), ld = tile.ld();
    const T* lse = lse_ + bh(b, h) * p_.lq + i0;
    const T* keep = keep_ + bh(b, h) * p_.keys;
    T* o = out_rows(b, h, i0);
    for (std::int64_t e = p_.mask.row_begin[row]; e < p_.mask.row_begin[row + 1]; ++e) {
      const std::int64_t n0 = p_.mask.tile[e] * p_.mask.k_tile, cols = p_.k_cols(p_.mask.tile[e]);
      tile.compute(in_, b, h, i0, rows, n0, cols, !p_.mask.full[e]);
      T* s = tile.scores();
      tiles::exp_minus_rows(s, ld, rows, cols, lse);
      tile.weight_factors(b, h, i0, rows, n0, cols, keep);
      tiles::multiply(s, ld, tile.factors(), ld, rows, cols);
      gemm(false, false, rows, d, cols, T(1), s, ld, v_rows(b, h, n0), d, T(1), o, d);
    }
  }

  // keep[b, h, n] for top-p heads (spec.h): the key-impact vector is the column sum of the
  // softmax weights, computed per (b, h, key tile) by walking the block mask's column, so
  // each weight is recomputed once and every sum has a fixed order.
  void top_p_keep() {
    const BlockMask& m = p_.mask;
    // The block mask's transpose: for each (batch item, group, key tile) the query tiles.
    const std::int64_t columns = m.batch * m.groups * m.k_tiles;
    std::vector<std::int64_t> column_begin(columns + 1, 0);
    std::vector<std::int32_t> column_qt(m.tile.size());
    std::vector<std::uint8_t> column_full(m.tile.size());
    auto column = [&](std::int64_t b, std::int64_t g, std::int64_t kt) {
      return (b * m.groups + g) * m.k_tiles + kt;
    };
    for (std::int64_t b = 0; b < m.batch; ++b)
      for (std::int64_t g = 0; g < m.groups; ++g)
        for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {
          const std::int64_t r = m.row(b, g, qt);
          for (std::int64_t e = m.row_begin[r]; e < m.row_begin[r + 1]; ++e)
            ++column_begin[column(b, g, m.tile[e]) + 1];
        }
    std::partial_sum(column_begin.begin(), column_begin.end(), column_begin.begin());
    std::vector<std::int64_t> fill(column_begin.begin(), column_begin.end() - 1);
    for (std::int64_t b = 0; b < m.batch; ++b)
      for (std::int64_t g = 0; g < m.groups; ++g)
        for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {  // ascending qt within each column
          const std::int64_t r = m.row(b, g, qt);
          for (std::int64_t e = m.row_begin[r]; e < m.row_begin[r + 1]; ++e) {
            const std::int64_t at = fill[column(b, g, m.tile[e])]++;
            column_qt[at] = static_cast<std::int32_t>(qt);
            column_full[at] = m.full[e];
          }
        }

    std::vector<T> impact(p_.batch * p_.heads * p_.keys, T(0));
    const std::int64_t tasks = p_.batch * p_.heads * m.k_tiles;
    at::parallel_for(0, tasks, 1, [&](std::int64_t begin, std::int64_t end) {
      ScoreTile<T> tile(p_);
      for (std::int64_t t = begin; t < end; ++t) {
        const std::int64_t b = t / (p_.heads * m.k_tiles), h = (t / m.k_tiles) % p_.heads;
        const std::int64_t kt = t % m.k_tiles;
        if (!is_top_p(h)) continue;
        const std::int64_t n0 = kt * m.k_tile, cols = p_.k_cols(kt), ld = tile.ld();
        const std::int64_t c = column(b, p_.head[h].group, kt);
        T* sums = impact.data() + bh(b, h) * p_.keys + n0;
        for (std::int64_t e = column_begin[c]; e < column_begin[c + 1]; ++e) {
          const std::int64_t qt = column_qt[e], i0 = qt * m.q_tile, rows = p_.q_rows(qt);
          tile.compute(in_, b, h, i0, rows, n0, cols, !column_full[e]);
          tiles::exp_minus_rows(tile.scores(), ld, rows, cols, lse_ + bh(b, h) * p_.lq + i0);
          tiles::add_column_sums(tile.scores(), ld, rows, cols, sums);
        }
      }
    });

    at::parallel_for(0, p_.batch * p_.heads, 1, [&](std::int64_t begin, std::int64_t end) {
      std::vector<std::int64_t> order(p_.keys);
      for (std::int64_t t = begin; t < end; ++t) {
        if (!is_top_p(t % p_.heads)) continue;
        select_keys(impact.data() + t * p_.keys, p_.head[t % p_.heads].top_p, order,
                    keep_ + t * p_.keys);
      }
    });
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
  T* out_;
  T* lse_;
  T* keep_;
};

}  // namespace

template <class T>
void fused_forward(const FusedPlan& plan, const FusedInputs<T>& in, T* out, T* lse, T* keep) {
  Forward<T>(plan, in, out, lse, keep).run();
}

template void fused_forward<float>(const FusedPlan&, const FusedInputs<float>&, float*, float*,
                                   float*);
template void fused_forward<double>(const FusedPlan&, const FusedInputs<double>&, double*, double*,
                                    double*);

}  // namespace strata::attn
