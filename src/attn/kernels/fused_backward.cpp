// The fused backward: the weights are recomputed tile by tile from the saved log-sum-exp
// (never stored), then, per tile,
//   dV += W^T dO               W = P * factors (dropout, top-p keep)
//   dP  = (dO V^T) * factors
//   dS  = P * (dP - D) / tau   D_i = rowsum(dO_i * O_i), which equals sum_n P dP because
//                              the factors multiply P before V
//   dQ += scale dS K, dK += scale dS^T Q, dTable[h][rel] += dS, dDense = dS.
//
// Parallel over (batch item, head, chunk of query tiles), shared out by balanced_for. dQ rows
// belong to one task; dK and dV rows are shared by every query tile of a (b, h), so each chunk
// accumulates its own copy and the copies are added in chunk order at the end. The chunk count
// depends only on the thread count, so results are deterministic for a fixed thread count.
// Nothing is zeroed ahead: a task's first product into rows of dQ, dK or dV writes them (beta
// 0), and what no product reached is zeroed at the end (a pass over a head's dQ, dK and dV,
// 3.6 % of same_section's time at L = 1,024, otherwise). Rows are tracked one by one, since
// the strips of a partial tile write parts of a tile's rows.
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "fused_passes.h"
#include "fused_tiles.h"
#include "strata/attn/balanced_for.h"
#include "strata/attn/tile_gemm.h"

namespace strata::attn {

namespace {

template <class T>
class Backward {
 public:
  Backward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<const T>& out, const T* lse,
           const T* keep, const HeadRows<const T>& dout, const FusedGrads<T>& grads)
      : p_(plan), in_(in), out_(out), lse_(lse), keep_(keep), dout_(dout), g_(grads) {}

  void run() {
    const std::int64_t pairs = p_.batch * p_.heads, q_tiles = p_.mask.q_tiles;
    if (pairs == 0 || q_tiles == 0) return;
    // Enough chunks per (b, h) to give every thread work; one when (b, h) pairs suffice.
    chunks_ = std::clamp<std::int64_t>((at::get_num_threads() + pairs - 1) / pairs, 1, q_tiles);
    const std::int64_t tasks = pairs * chunks_, kv = pairs * p_.keys * p_.dim;
    if (chunks_ > 1) {
      if (g_.dk) dk_part_.resize((chunks_ - 1) * kv);
      if (g_.dv) dv_part_.resize((chunks_ - 1) * kv);
    }
    if (g_.dtable) dtable_part_.assign(tasks * p_.relations, T(0));

    balanced_for(tasks, 1, [&] { return Scratch(p_); }, [&](Scratch& scratch, std::int64_t begin, std::int64_t end) {
      ScoreTile<T>& tile = scratch.tile;
      for (std::int64_t t = begin; t < end; ++t) {
        const std::int64_t bh = t / chunks_, c = t % chunks_;
        const std::int64_t b = bh / p_.heads, h = bh % p_.heads;
        Target target;
        target.dk = accumulator(g_.dk, dk_part_, c);
        target.dv = accumulator(g_.dv, dv_part_, c);
        target.dtable = g_.dtable ? dtable_part_.data() + t * p_.relations : nullptr;
        scratch.dk_written.assign(p_.keys, 0);
        scratch.dv_written.assign(p_.keys, 0);
        const std::int64_t first = c * q_tiles / chunks_, last = (c + 1) * q_tiles / chunks_;
        for (std::int64_t qt = first; qt < last; ++qt) {
          if (p_.head[h].fixed())
            fixed_rows(scratch, target, b, h, qt);
          else
            softmax_rows(tile, scratch, target, b, h, qt);
        }
        zero_unwritten(row_at(target.dk, b, h, 0), target.dk.ld(), p_.dim, scratch.dk_written.data(), p_.keys);
        zero_unwritten(row_at(target.dv, b, h, 0), target.dv.ld(), p_.dim, scratch.dv_written.data(), p_.keys);
      }
    });

    for (std::int64_t c = 1; c < chunks_; ++c) {
      add_chunk(g_.dk, dk_part_, c);
      add_chunk(g_.dv, dv_part_, c);
    }
    if (g_.dtable)
      for (std::int64_t t = 0; t < tasks; ++t) {
        T* row = g_.dtable + ((t / chunks_) % p_.heads) * p_.relations;
        const T* part = dtable_part_.data() + t * p_.relations;
        for (std::int64_t r = 0; r < p_.relations; ++r) row[r] += part[r];
      }
  }

 private:
  // Per-thread scratch: the score tile, dP (then dS) and the row sums D; and which rows of dK
  // and dV the task has written, and of dQ its query tile.
  struct Scratch {
    explicit Scratch(const FusedPlan& p)
        : tile(p), dp(p.mask.q_tile * tile.ld()), row_dot(p.mask.q_tile) {}
    ScoreTile<T> tile;
    std::vector<T> dp, row_dot;
    HeadTranspose<T> values_t;
    HeadCopy<T> keys, queries, d_outs;  // B of the dQ, dK and dV products
    std::vector<std::uint8_t> dk_written, dv_written, dq_written;
  };

  // Where one task accumulates dK, dV (rows of its (b, h)) and its head's dTable row.
  struct Target {
    HeadRows<T> dk, dv;
    T* dtable = nullptr;
  };

  // Chunk 0 accumulates straight into the gradient; later chunks into their own copy, laid
  // out as the gradient is (a dense block, so the copies add element by element).
  HeadRows<T> accumulator(const HeadRows<T>& grad, std::vector<T>& parts, std::int64_t c) const {
    if (!grad) return {};
    HeadRows<T> rows = grad;
    if (c > 0) rows.data = parts.data() + (c - 1) * p_.batch * p_.heads * p_.keys * p_.dim;
    return rows;
  }

  // Row i of (b, h) in a gradient; null for one not wanted.
  static T* row_at(const HeadRows<T>& grad, std::int64_t b, std::int64_t h, std::int64_t i) {
    return grad ? grad.at(b, h, i) : nullptr;
  }

  void add_chunk(const HeadRows<T>& grad, const std::vector<T>& parts, std::int64_t c) const {
    if (!grad) return;
    const std::int64_t size = p_.batch * p_.heads * p_.keys * p_.dim;
    const T* part = parts.data() + (c - 1) * size;
    at::parallel_for(0, size, 4096, [&](std::int64_t begin, std::int64_t end) {
      tiles::add(grad.data + begin, 0, part + begin, 0, 1, end - begin);
    });
  }

  // A fixed head has no dQ or dK (its weights are constants); its dV rows are added to one
  // query at a time, so the task's are zeroed whole first.
  void fixed_rows(Scratch& scratch, const Target& target, std::int64_t b, std::int64_t h, std::int64_t qt) {
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim;
    if (g_.dq) zero_rows(g_.dq.at(b, h, i0), g_.dq.ld(), rows, d);
    if (!target.dv) return;
    zero_unwritten(target.dv.at(b, h, 0), target.dv.ld(), d, scratch.dv_written.data(), p_.keys);
    std::fill(scratch.dv_written.begin(), scratch.dv_written.end(), std::uint8_t{1});
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t key = p_.rules.fixed_key(b, h, i0 + r);
      if (key < 0) continue;
      const T factor = p_.dropout_factor<T>(b, h, i0 + r, key);
      const T* d_out = dout_.at(b, h, i0 + r);
      T* dv = target.dv.at(b, h, key);
      for (std::int64_t c = 0; c < d; ++c) dv[c] += d_out[c] * factor;
    }
  }

  void softmax_rows(ScoreTile<T>& tile, Scratch& scratch, const Target& target, std::int64_t b,
                    std::int64_t h, std::int64_t qt) {
    const std::int64_t i0 = p_.q_begin(qt), rows = p_.q_rows(qt), d = p_.dim;
    const std::int64_t row = p_.mask_row(b, h, qt);
    const T* d_out = dout_.at(b, h, i0);
    const T* out = out_.at(b, h, i0);
    T* row_dot = scratch.row_dot.data();
    for (std::int64_t r = 0; r < rows; ++r) row_dot[r] = tiles::dot(d_out + r * dout_.ld(), out + r * out_.ld(), d);

    scratch.dq_written.assign(rows, 0);
    for (std::int64_t e = p_.mask.row_begin[row]; e < p_.mask.row_begin[row + 1]; ++e) {
      const std::int64_t tile_n0 = p_.k_begin(p_.mask.tile[e]);
      for (const Strip& strip : tile.strips(b, h, qt, e))
        strip_grads(tile, scratch, target, b, h, i0, tile_n0, strip);
    }
    zero_unwritten(row_at(g_.dq, b, h, i0), g_.dq.ld(), d, scratch.dq_written.data(), rows);
  }

  // One strip's (or a whole tile's) part of the gradients, in the tile of queries from
  // tile_i0 and keys from tile_n0.
  void strip_grads(ScoreTile<T>& tile, Scratch& scratch, const Target& target, std::int64_t b, std::int64_t h,
                   std::int64_t tile_i0, std::int64_t tile_n0, const Strip& strip) {
    const std::int64_t r0 = strip.r0, rows = strip.rows, cols = strip.cols;
    const std::int64_t d = p_.dim, ld = tile.ld(), i0 = tile_i0 + r0, n0 = tile_n0 + strip.lo;
    const HeadRows<const T> q_rows = scratch.queries.of(in_.q, b, h, p_.lq, d),
                            k_rows = scratch.keys.of(in_.k, b, h, p_.keys, d),
                            dout_rows = scratch.d_outs.of(dout_, b, h, p_.lq, d);
    const T* d_out = dout_rows.at(0, 0, i0);
    const T* q = q_rows.at(0, 0, i0);
    const std::int64_t ld_dout = dout_rows.ld(), ld_q = q_rows.ld(), ld_k = k_rows.ld();
    const T* lse = lse_ + (b * p_.heads + h) * p_.lq + i0;
    const T* keep = p_.head[h].normaliser == NormaliserKind::TopP
                        ? keep_ + (b * p_.heads + h) * p_.keys
                        : nullptr;
    const T mult =
        p_.head[h].normaliser == NormaliserKind::Gumbel ? static_cast<T>(p_.head[h].inv_tau) : T(1);
    const T scale = static_cast<T>(p_.scale);
    const bool need_ds = g_.dq || target.dk || target.dtable || g_.ddense;
    T* dp = scratch.dp.data();
    const T* row_dot = scratch.row_dot.data() + r0;

    tile.compute_strip(in_, b, h, strip);
    T* prob = tile.scores();
    tiles::exp_minus_rows(prob, ld, rows, cols, lse);
    const T* k = k_rows.at(0, 0, n0);
    const auto v_t = HeadTranspose<T>::columns(scratch.values_t.of(in_.v, b, h, d, p_.mask.key_start), d,
                                               p_.mask.key_start, n0);
    // A tile whose keys top-p truncated, all of them: its weights are 0, so dP is 0 and it
    // adds nothing to dV, but dS = P * (0 - D) still reaches its scores.
    const bool truncated =
        keep != nullptr && std::all_of(keep + n0, keep + n0 + cols, [](T x) { return x == T(0); });
    if (truncated) {
      for (std::int64_t r = 0; r < rows; ++r) std::fill_n(dp + r * ld, cols, T(0));
    } else {
      gemm(false, rows, cols, d, T(1), d_out, ld_dout, v_t.data, v_t.ld, T(0), dp, ld);
      const T* weights = prob;
      if (tile.weight_factors(b, h, i0, rows, n0, cols, keep)) {
        T* factors = tile.factors();
        tiles::multiply(dp, ld, factors, ld, rows, cols);
        tiles::multiply(factors, ld, prob, ld, rows, cols);  // factors become the weights
        weights = factors;
      }
      if (target.dv)
        into_rows(target.dv.at(b, h, n0), target.dv.ld(), d, scratch.dv_written.data() + n0, cols,
                  [&](std::int64_t m0, std::int64_t m1, T beta) {
                    gemm(true, m1 - m0, d, rows, T(1), weights + m0, ld, d_out, ld_dout, beta,
                         target.dv.at(b, h, n0 + m0), target.dv.ld());
                  });
    }
    if (!need_ds) return;
    tiles::softmax_grad(dp, ld, prob, ld, rows, cols, row_dot, mult);  // dp is now dS
    if (g_.dq)
      into_rows(g_.dq.at(b, h, i0), g_.dq.ld(), d, scratch.dq_written.data() + r0, rows,
                [&](std::int64_t m0, std::int64_t m1, T beta) {
                  gemm(false, m1 - m0, d, cols, scale, dp + m0 * ld, ld, k, ld_k, beta, g_.dq.at(b, h, i0 + m0),
                       g_.dq.ld());
                });
    if (target.dk)
      into_rows(target.dk.at(b, h, n0), target.dk.ld(), d, scratch.dk_written.data() + n0, cols,
                [&](std::int64_t m0, std::int64_t m1, T beta) {
                  gemm(true, m1 - m0, d, rows, scale, dp + m0, ld, q, ld_q, beta, target.dk.at(b, h, n0 + m0),
                       target.dk.ld());
                });
    if (target.dtable) tile.add_relation_grad(dp, rows, cols, target.dtable);
    if (g_.ddense) {
      T* dense = g_.ddense + ((b * p_.heads + h) * p_.lq + i0) * p_.keys + n0;
      for (std::int64_t r = 0; r < rows; ++r) std::copy_n(dp + r * ld, cols, dense + r * p_.keys);
    }
  }

  const FusedPlan& p_;
  const FusedInputs<T>& in_;
  const HeadRows<const T>& out_;
  const T* lse_;
  const T* keep_;
  const HeadRows<const T>& dout_;
  const FusedGrads<T>& g_;
  std::int64_t chunks_ = 1;
  std::vector<T> dk_part_, dv_part_, dtable_part_;
};

}  // namespace

template <class T>
void fused_backward(const FusedPlan& plan, const FusedInputs<T>& in, const HeadRows<const T>& out,
                    const T* lse, const T* keep, const HeadRows<const T>& dout, const FusedGrads<T>& grads) {
  Backward<T>(plan, in, out, lse, keep, dout, grads).run();
}

template void fused_backward<float>(const FusedPlan&, const FusedInputs<float>&, const HeadRows<const float>&,
                                    const float*, const float*, const HeadRows<const float>&,
                                    const FusedGrads<float>&);
template void fused_backward<double>(const FusedPlan&, const FusedInputs<double>&,
                                     const HeadRows<const double>&, const double*, const double*,
                                     const HeadRows<const double>&, const FusedGrads<double>&);

}  // namespace strata::attn
