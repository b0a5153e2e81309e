#include "fused_plan.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "fused_tiles.h"
#include "strata/attn/tile_gemm.h"
#include "strata/attn/transpose.h"
#include "query_votes.h"
#include "strata/core/error.h"

namespace strata::attn {

namespace {

// A block mask handed in by the caller must describe this call's shapes and heads.
void check_block_mask(const BlockMask& mask, const PairRules& rules) {
  auto bad = [](const std::string& what) {
    return Error("attention call: block_mask " + what + " (compile it for this call)");
  };
  if (mask.lq != rules.queries() || mask.lk != rules.keys())
    throw bad("covers " + std::to_string(mask.lq) + " queries x " + std::to_string(mask.lk) +
              " keys, the call has " + std::to_string(rules.queries()) + " x " +
              std::to_string(rules.keys()));
  if (mask.batch != rules.batch())
    throw bad("has batch " + std::to_string(mask.batch) + ", the call " +
              std::to_string(rules.batch()));
  if (static_cast<std::int64_t>(mask.head_group.size()) != rules.heads())
    throw bad("has " + std::to_string(mask.head_group.size()) + " heads, the call " +
              std::to_string(rules.heads()));
  // Tile starts run from 0 to `end` in steps of 1 .. widest.
  const auto tiles_ok = [](const std::vector<std::int64_t>& start, std::int64_t tiles,
                           std::int64_t end, std::int64_t widest) {
    if (static_cast<std::int64_t>(start.size()) != tiles + 1 || start.front() != 0 ||
        start.back() != end)
      return false;
    for (std::size_t t = 0; t + 1 < start.size(); ++t)
      if (start[t] >= start[t + 1] || start[t + 1] - start[t] > widest) return false;
    return true;
  };
  if (mask.q_tile <= 0 || mask.k_tile <= 0 ||
      !tiles_ok(mask.query_start, mask.q_tiles, mask.lq, mask.q_tile) ||
      !tiles_ok(mask.key_start, mask.k_tiles, mask.lk, mask.k_tile) ||
      static_cast<std::int64_t>(mask.row_begin.size()) !=
          mask.batch * mask.groups * mask.q_tiles + 1)
    throw bad("has inconsistent tile counts");
  const std::size_t entries = mask.tile.size();
  if (mask.row_begin.front() != 0 || mask.row_begin.back() != static_cast<std::int64_t>(entries) ||
      mask.full.size() != entries ||
      std::any_of(mask.tile.begin(), mask.tile.end(),
                  [&](std::int32_t kt) { return kt < 0 || kt >= mask.k_tiles; }))
    throw bad("has malformed rows");
  for (std::int64_t h = 0; h < rules.heads(); ++h)
    if ((mask.head_group[h] < 0) != (rules.fixed(h) != FixedPattern::None) ||
        mask.head_group[h] >= mask.groups)
      throw bad("disagrees with the spec about head " + std::to_string(h));
}

}  // namespace

FusedPlan::FusedPlan(PairRules rules_in, BlockMask mask_in, const AttentionCall& call)
    : rules(std::move(rules_in)), mask(std::move(mask_in)) {
  check_block_mask(mask, rules);
  batch = rules.batch();
  heads = rules.heads();
  lq = rules.queries();
  keys = rules.keys();
  dim = call.q.size(3);
  scale = 1.0 / std::sqrt(static_cast<double>(dim));
  has_table = rules.has_relation();
  relations = has_table ? call.bias_table.size(1) : 0;
  has_dense = call.dense_bias.defined();
  if (has_dense) {
    dense_batch_stride = call.dense_bias.size(0) == 1 ? 0 : call.dense_bias.size(1) * lq * keys;
    dense_head_stride = call.dense_bias.size(1) == 1 ? 0 : lq * keys;
  }
  gumbel_noise = call.training;
  dropout = call.training ? call.dropout : 0.0;
  first_kept = first_kept_draw(dropout);
  seed = call.seed;
  const LayerSpec& spec = rules.spec();
  head.resize(heads);
  for (std::int64_t h = 0; h < heads; ++h) {
    const HeadSpec& hs = spec.head(h);
    FusedHead& fh = head[h];
    fh.group = mask.head_group[h];
    fh.normaliser = hs.normaliser.kind;
    fh.inv_tau = 1.0 / hs.normaliser.tau;
    fh.top_p = hs.normaliser.p;
    any_top_p = any_top_p || (!fh.fixed() && fh.normaliser == NormaliserKind::TopP);
  }
  votes_hold = query_votes(call);
  if (votes_hold.defined()) votes = votes_hold.data_ptr<std::uint8_t>();
  std::vector<std::int64_t> group_head(mask.groups, -1);
  for (std::int64_t h = heads - 1; h >= 0; --h)
    if (!head[h].fixed()) group_head[head[h].group] = h;
  edges = EdgeTiles(rules, mask, group_head);
}

std::int64_t strips_of(const std::int64_t* first, const std::int64_t* last, std::int64_t rows, std::int64_t cols,
                       Strip* out) {
  const auto vectors = [](std::int64_t c) { return (c + 15) / 16; };
  std::int64_t count = 0, cost = 0;
  for (std::int64_t r0 = 0; r0 < rows; r0 += kStripRows) {
    const std::int64_t strip_rows = std::min(kStripRows, rows - r0);
    std::int64_t lo = cols, hi = 0;
    for (std::int64_t r = r0; r < r0 + strip_rows; ++r)
      if (first[r] < last[r]) {
        lo = std::min(lo, first[r]);
        hi = std::max(hi, last[r]);
      }
    if (lo >= hi) continue;
    out[count++] = {r0, strip_rows, lo, hi - lo};
    cost += strip_rows * vectors(hi - lo);
  }
  if (count > 0 && 5 * cost >= 4 * rows * vectors(cols)) {
    out[0] = {0, rows, 0, cols};
    count = 1;
  }
  return count;
}

EdgeTiles::EdgeTiles(const PairRules& rules, const BlockMask& mask, const std::vector<std::int64_t>& group_head)
    : rows_(mask.q_tile), max_strips_(strips_per_tile(mask.q_tile)) {
  if (mask.batch == 0) return;
  const std::int64_t item_rows = mask.groups * mask.q_tiles;  // batch item 0's rows come first
  slot_.assign(static_cast<std::size_t>(mask.row_begin[item_rows]), -1);
  std::int32_t slots = 0;
  for (std::size_t e = 0; e < slot_.size(); ++e)
    if (!mask.full[e]) slot_[e] = slots++;
  first_.resize(static_cast<std::size_t>(slots * rows_));
  last_.resize(first_.size());
  strips_.resize(static_cast<std::size_t>(slots * max_strips_));
  strip_count_.resize(static_cast<std::size_t>(slots));
  at::parallel_for(0, item_rows, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row) {
      const std::int64_t g = row / mask.q_tiles, qt = row % mask.q_tiles, h = group_head[g];
      const std::int64_t i0 = mask.q_begin(qt), rows = mask.q_rows(qt);
      for (std::int64_t e = mask.row_begin[row]; e < mask.row_begin[row + 1]; ++e) {
        std::int32_t& slot = slot_[e];
        if (slot < 0) continue;
        const std::int64_t n0 = mask.k_begin(mask.tile[e]), cols = mask.k_cols(mask.tile[e]);
        std::int64_t* first = first_.data() + slot * rows_;
        std::int64_t* last = last_.data() + slot * rows_;
        if (h < 0 || !rules.row_runs(0, h, i0, i0 + rows, n0, n0 + cols, first, last)) {
          slot = -1;
          continue;
        }
        strip_count_[slot] = strips_of(first, last, rows, cols, strips_.data() + slot * max_strips_);
      }
    }
  });
}

std::optional<EdgeTile> EdgeTiles::find(const BlockMask& mask, std::int64_t b, std::int64_t g, std::int64_t qt,
                                        std::int64_t e) const {
  if (b > 0) {  // the same key tile in batch item 0's row
    const std::int64_t row = mask.row(0, g, qt);
    const auto begin = mask.tile.begin() + mask.row_begin[row], end = mask.tile.begin() + mask.row_begin[row + 1];
    const auto at = std::lower_bound(begin, end, mask.tile[e]);
    if (at == end || *at != mask.tile[e]) return std::nullopt;
    e = at - mask.tile.begin();
  }
  const std::int32_t slot = slot_[e];
  if (slot < 0) return std::nullopt;
  return EdgeTile{first_.data() + slot * rows_, last_.data() + slot * rows_,
                  {strips_.data() + slot * max_strips_, static_cast<std::size_t>(strip_count_[slot])}};
}

template <class T>
ScoreTile<T>::ScoreTile(const FusedPlan& plan)
    : plan_(plan),
      ld_(plan.mask.k_tile),
      scores_(plan.mask.q_tile * ld_),
      factors_(plan.mask.q_tile * ld_),
      relations_(plan.has_table ? plan.mask.q_tile * ld_ : 0),
      visible_(plan.mask.q_tile * ld_),
      hull_first_(plan.mask.q_tile),
      hull_last_(plan.mask.q_tile),
      strips_(static_cast<std::size_t>(strips_per_tile(plan.mask.q_tile))) {}

template <class T>
void ScoreTile<T>::compute_into(T* s, const FusedInputs<T>& in, std::int64_t b, std::int64_t h,
                                std::int64_t i0, std::int64_t rows, std::int64_t n0,
                                std::int64_t cols, bool partial) {
  unmasked_into(s, in, b, h, i0, rows, n0, cols);
  if (partial) {
    plan_.rules.visible_tile(b, h, i0, i0 + rows, n0, n0 + cols, visible_.data(), ld_);
    tiles::mask_hidden(s, ld_, visible_.data(), ld_, rows, cols);
  }
}

template <class T>
void ScoreTile<T>::compute_strip(const FusedInputs<T>& in, std::int64_t b, std::int64_t h, const Strip& strip) {
  T* s = scores_.data();
  unmasked_into(s, in, b, h, strips_i0_ + strip.r0, strip.rows, strips_n0_ + strip.lo, strip.cols);
  if (!strips_partial_) return;
  if (strips_runs_)
    tiles::mask_outside_runs(s, ld_, first_ + strip.r0, last_ + strip.r0, strip.rows, strip.lo, strip.cols);
  else
    tiles::mask_hidden(s, ld_, visible_.data() + strip.r0 * ld_ + strip.lo, ld_, strip.rows, strip.cols);
}

template <class T>
void ScoreTile<T>::unmasked_into(T* s, const FusedInputs<T>& in, std::int64_t b, std::int64_t h, std::int64_t i0,
                                 std::int64_t rows, std::int64_t n0, std::int64_t cols) {
  const FusedPlan& p = plan_;
  const auto k_t = HeadTranspose<T>::columns(keys_t_.of(in.k, b, h, p.dim, p.mask.key_start), p.dim,
                                             p.mask.key_start, n0);  // [D, cols]
  gemm(false, rows, cols, p.dim, static_cast<T>(p.scale), in.q.at(b, h, i0), in.q.ld(), k_t.data, k_t.ld, T(0), s,
       ld_);
  if (p.has_table) {
    const T* table = in.table + h * p.relations;
    uniform_relation_ = p.rules.uniform_relation(b, i0, i0 + rows, n0, n0 + cols);
    if (!uniform_relation_) {
      std::int32_t* rel = relations_.data();
      p.rules.relation_tile(b, i0, i0 + rows, n0, n0 + cols, rel, ld_);
      tiles::add_table_bias(s, ld_, rel, ld_, rows, cols, table);
    } else if (*uniform_relation_ >= 0) {
      tiles::add_constant(s, ld_, rows, cols, table[*uniform_relation_]);
    }
  }
  if (p.has_dense)
    tiles::add(s, ld_,
               in.dense + b * p.dense_batch_stride + h * p.dense_head_stride + i0 * p.keys + n0,
               p.keys, rows, cols);
  const FusedHead& head = p.head[h];
  if (head.normaliser == NormaliserKind::Gumbel) {
    const T inv_tau = static_cast<T>(head.inv_tau);
    for (std::int64_t r = 0; r < rows; ++r) {
      T* x = s + r * ld_;
      if (p.gumbel_noise)
        tiles::add_gumbel(x, counter_row(p.seed, RandomStream::Gumbel, b, h, i0 + r), n0, cols);
    }
    tiles::scale(s, ld_, rows, cols, inv_tau);
  }
}

template <class T>
std::span<const Strip> ScoreTile<T>::strips(std::int64_t b, std::int64_t h, std::int64_t qt, std::int64_t e) {
  const BlockMask& mask = plan_.mask;
  const std::int64_t i0 = mask.q_begin(qt), rows = mask.q_rows(qt);
  const std::int64_t n0 = mask.k_begin(mask.tile[e]), cols = mask.k_cols(mask.tile[e]);
  strips_i0_ = i0;
  strips_n0_ = n0;
  strips_partial_ = !mask.full[e];
  if (!strips_partial_) {
    strips_[0] = {0, rows, 0, cols};
    return {strips_.data(), 1};
  }
  if (const auto edge = plan_.edges.find(mask, b, plan_.head[h].group, qt, e)) {
    strips_runs_ = true;
    first_ = edge->first;
    last_ = edge->last;
    return edge->strips;
  }
  strips_runs_ = false;
  plan_.rules.visible_tile(b, h, i0, i0 + rows, n0, n0 + cols, visible_.data(), ld_);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto* row = visible_.data() + r * ld_;
    const auto* first = static_cast<const std::uint8_t*>(std::memchr(row, 1, static_cast<std::size_t>(cols)));
    if (first == nullptr) {
      hull_first_[r] = hull_last_[r] = 0;
      continue;
    }
    const auto* last = static_cast<const std::uint8_t*>(memrchr(first, 1, static_cast<std::size_t>(row + cols - first)));
    hull_first_[r] = first - row;  // the hull of what the row sees; the bytes stay the predicate
    hull_last_[r] = last + 1 - row;
  }
  return {strips_.data(), static_cast<std::size_t>(strips_of(hull_first_.data(), hull_last_.data(), rows, cols,
                                                             strips_.data()))};
}

template <class T>
void ScoreTile<T>::compute_keys(const FusedInputs<T>& in, std::int64_t b, std::int64_t h,
                                std::int64_t i0, std::int64_t rows, const std::int64_t* key,
                                const std::uint8_t* check, std::int64_t count) {
  const FusedPlan& p = plan_;
  const std::int64_t d = p.dim;
  T* s = scores_.data();
  gathered_.resize(static_cast<std::size_t>(ld_ * d));
  // Q K^T with K's rows gathered, transposed, into a contiguous [D, count] block.
  for (std::int64_t c = 0; c < count; ++c) {
    const T* k = in.k.at(b, h, key[c]);
    for (std::int64_t e = 0; e < d; ++e) gathered_[e * ld_ + c] = k[e];
  }
  gemm(false, rows, count, d, static_cast<T>(p.scale), in.q.at(b, h, i0), in.q.ld(),
       gathered_.data(), ld_, T(0), s, ld_);
  if (p.has_table) {
    const T* table = in.table + h * p.relations;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < count; ++c) {
        const std::int32_t id = p.rules.relation(b, i0 + r, key[c]);
        if (id >= 0) s[r * ld_ + c] += table[id];
      }
  }
  if (p.has_dense) {
    const T* dense = in.dense + b * p.dense_batch_stride + h * p.dense_head_stride + i0 * p.keys;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < count; ++c) s[r * ld_ + c] += dense[r * p.keys + key[c]];
  }
  const FusedHead& head = p.head[h];
  if (head.normaliser == NormaliserKind::Gumbel) {
    const T inv_tau = static_cast<T>(head.inv_tau);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::uint64_t row = counter_row(p.seed, RandomStream::Gumbel, b, h, i0 + r);
      for (std::int64_t c = 0; c < count; ++c) {
        T& x = s[r * ld_ + c];
        if (p.gumbel_noise) x += static_cast<T>(tiles::gumbel_at(row, key[c]));
        x *= inv_tau;
      }
    }
  }
  constexpr T kHidden = -std::numeric_limits<T>::infinity();
  for (std::int64_t c = 0; c < count; ++c) {
    if (!check[c]) continue;
    for (std::int64_t r = 0; r < rows; ++r)
      if (!p.rules.visible(b, h, i0 + r, key[c])) s[r * ld_ + c] = kHidden;
  }
}

template <class T>
void ScoreTile<T>::add_relation_grad(const T* ds, std::int64_t rows, std::int64_t cols,
                                     T* dtable) const {
  if (!uniform_relation_)
    tiles::add_table_grad(ds, ld_, relations_.data(), ld_, rows, cols, dtable);
  else if (*uniform_relation_ >= 0)
    dtable[*uniform_relation_] += tiles::sum(ds, ld_, rows, cols);
}

template <class T>
bool ScoreTile<T>::weight_factors(std::int64_t b, std::int64_t h, std::int64_t i0,
                                  std::int64_t rows, std::int64_t n0, std::int64_t cols,
                                  const T* keep) {
  const FusedPlan& p = plan_;
  if (p.dropout <= 0 && (keep == nullptr || std::all_of(keep + n0, keep + n0 + cols,
                                                        [](T k) { return k == T(1); })))
    return false;
  T* f = factors_.data();
  if (keep == nullptr) {  // dropout's factors alone, written as they are drawn
    for (std::int64_t r = 0; r < rows; ++r)
      tiles::dropout_factors(f + r * ld_, dropout_row(b, h, i0 + r), n0, cols, p.first_kept, dropout_kept());
    return true;
  }
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) f[r * ld_ + c] = keep[n0 + c];
  thin_weights(f, b, h, i0, rows, n0, cols);  // times dropout's factors, when on
  return true;
}

template <class T>
void ScoreTile<T>::thin_weights(T* weights, std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t rows,
                                std::int64_t n0, std::int64_t cols) const {
  if (plan_.dropout <= 0) return;
  for (std::int64_t r = 0; r < rows; ++r)
    tiles::apply_dropout(weights + r * ld_, dropout_row(b, h, i0 + r), n0, cols, plan_.first_kept, dropout_kept());
}

// dropout_factor's rule with the row's part of the counter hoisted out of the key loop.
template <class T>
std::uint64_t ScoreTile<T>::dropout_row(std::int64_t b, std::int64_t h, std::int64_t i) const {
  return counter_row(plan_.seed, RandomStream::Dropout, b, h, i);
}

template <class T>
T ScoreTile<T>::dropout_kept() const {
  return plan_.dropout < 1 ? static_cast<T>(1.0 / (1.0 - plan_.dropout)) : T(0);
}

template class ScoreTile<float>;
template class ScoreTile<double>;

template <class T>
const T* HeadTranspose<T>::of(const HeadRows<const T>& rows, std::int64_t b, std::int64_t h,
                              std::int64_t d, const std::vector<std::int64_t>& key_start) {
  const T* head = rows.at(b, h, 0);
  const std::int64_t n = key_start.back(), ld = rows.ld();
  const auto [buffer, fill] = buffer_.for_head(head, n * d);
  if (fill)
    for (std::size_t t = 0; t + 1 < key_start.size(); ++t) {
      const std::int64_t n0 = key_start[t], cols = key_start[t + 1] - n0;
      transpose(head + n0 * ld, ld, cols, d, buffer + n0 * d, cols);  // a [d, cols] block
    }
  return buffer;
}

template class HeadTranspose<float>;
template class HeadTranspose<double>;

template <class T>
HeadRows<const T> HeadCopy<T>::of(const HeadRows<const T>& rows, std::int64_t b, std::int64_t h, std::int64_t n,
                                  std::int64_t d) {
  const T* head = rows.at(b, h, 0);
  const std::int64_t ld = rows.ld();
  if (ld < kPackRowsApart || n * d > kMaxElements) return {head, 0, 0, ld};
  const auto [buffer, fill] = buffer_.for_head(head, n * d);
  if (fill)
    for (std::int64_t r = 0; r < n; ++r) std::copy_n(head + r * ld, d, buffer + r * d);
  return {buffer, 0, 0, d};
}

template class HeadCopy<float>;
template class HeadCopy<double>;

}  // namespace strata::attn
