#include "strata/attn/block_mask.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "strata/attn/pair_rules.h"
#include "strata/core/error.h"

namespace strata::attn {

double BlockMask::tile_density() const {
  const std::int64_t total = batch * groups * q_tiles * k_tiles;
  return total == 0 ? 0.0 : static_cast<double>(tile.size()) / static_cast<double>(total);
}

namespace {

using State = PairRules::State;

// How a predicate covers a rectangle of pairs: none of them, some, or all.
enum class Cover : std::uint8_t { Empty, Partial, Full };

struct Range {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  void add(std::int64_t v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
};

// Equality between every value of `a` and every value of `b`.
Cover equal(const Range& a, const Range& b) {
  if (a.hi < b.lo || b.hi < a.lo) return Cover::Empty;
  if (a.lo == a.hi && b.lo == b.hi) return Cover::Full;
  return Cover::Partial;
}

Cover from(bool all, bool none) { return all ? Cover::Full : none ? Cover::Empty : Cover::Partial; }

// The distinct values of a few ids, ascending.
using IdSet = std::vector<std::int32_t>;

void finish(IdSet& set) {
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
}

struct QueryTile {
  Range index;  // i' = i + query_offset
  std::array<Range, kLayoutFields> field;
  IdSet segments;  // the distinct segment ids (prefix_block), when the field is loaded
};

// A key tile in two parts: its prefix slots, and its keys proper summarised over the real
// (non-padding) keys only, since padding keys are invisible whatever the mask says.
struct KeyTile {
  bool has_prefix = false, has_keys = false;
  IdSet prefix_groups;  // the distinct segment ids of its prefix slots
  bool any_real = false, all_real = true;
  Range index;  // j over the real keys
  std::array<Range, kLayoutFields> field;
};

Cover on_keys(const State::Op& op, const QueryTile& q, const KeyTile& k) {
  const Range &i = q.index, &j = k.index;
  switch (op.kind) {
    case MaskKind::All:
    case MaskKind::PrefixBlock: return Cover::Full;
    case MaskKind::Causal: return from(j.hi <= i.lo, j.lo > i.hi);
    case MaskKind::Window:
      return from(j.lo >= i.hi - op.a && j.hi <= i.lo + op.b,
                  j.hi < i.lo - op.a || j.lo > i.hi + op.b);
    case MaskKind::Global: return from(i.hi < op.a || j.hi < op.a, i.lo >= op.a && j.lo >= op.a);
    case MaskKind::Blocks: {
      // Every key's block within [query block - B, query block] for every query, or none.
      const std::int64_t qlo = i.lo / op.a, qhi = i.hi / op.a, klo = j.lo / op.a, khi = j.hi / op.a;
      return from(klo >= qhi - op.b && khi <= qlo, khi < qlo - op.b || klo > qhi);
    }
    case MaskKind::MatchingToken: {
      const Range& repeated = q.field[static_cast<int>(LayoutField::Repeated)];
      const Cover tokens = equal(q.field[static_cast<int>(LayoutField::Token)],
                                 k.field[static_cast<int>(LayoutField::Token)]);
      if (repeated.hi == 0 || tokens == Cover::Full) return Cover::Full;
      return repeated.lo != 0 && tokens == Cover::Empty ? Cover::Empty : Cover::Partial;
    }
    default: {
      const int f = static_cast<int>(field_of(op.kind));
      return equal(q.field[f], k.field[f]);
    }
  }
}

// prefix_block over a tile's prefix slots, exactly: empty when no slot's group is the segment
// of any query of the tile, full when the tile's queries and slots all share one id. (Ranges
// would call a tile of groups {0, 2} partial for queries of segment 1.)
Cover on_prefix(const State::Op& op, const QueryTile& q, const KeyTile& k) {
  if (op.kind != MaskKind::PrefixBlock) return Cover::Full;
  const IdSet &a = q.segments, &b = k.prefix_groups;
  if (a.size() == 1 && b.size() == 1) return a[0] == b[0] ? Cover::Full : Cover::Empty;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) return Cover::Partial;
    a[i] < b[j] ? ++i : ++j;
  }
  return Cover::Empty;
}

// Runs the postfix program over covers: And is empty if any operand is, full if all are;
// Or is the dual; Not swaps empty and full.
template <class Primitive>
Cover evaluate(const std::vector<State::Op>& program, std::vector<Cover>& stack,
               Primitive primitive) {
  stack.clear();
  for (const State::Op& op : program) {
    if (op.kind == MaskKind::And || op.kind == MaskKind::Or) {
      const bool is_and = op.kind == MaskKind::And;
      const Cover absorbing = is_and ? Cover::Empty : Cover::Full;
      const Cover neutral = is_and ? Cover::Full : Cover::Empty;
      Cover result = neutral;
      for (std::int32_t k = 0; k < op.arity; ++k) {
        const Cover c = stack.back();
        stack.pop_back();
        if (c == absorbing || result == absorbing)
          result = absorbing;
        else if (c == Cover::Partial)
          result = Cover::Partial;
      }
      stack.push_back(result);
    } else if (op.kind == MaskKind::Not) {
      Cover& c = stack.back();
      c = c == Cover::Full ? Cover::Empty : c == Cover::Empty ? Cover::Full : Cover::Partial;
    } else {
      stack.push_back(primitive(op));
    }
  }
  return stack.back();
}

std::vector<QueryTile> query_tiles(const State& s, std::int64_t b, std::int64_t q_tile) {
  std::vector<QueryTile> tiles;
  for (std::int64_t i0 = 0; i0 < s.lq; i0 += q_tile) {
    QueryTile t;
    const std::int64_t i1 = std::min(i0 + q_tile, s.lq);
    t.index = {i0 + s.query_offset, i1 - 1 + s.query_offset};
    for (int f = 0; f < kLayoutFields; ++f) {
      if (s.query[f].data == nullptr) continue;
      const std::int32_t* ids = s.query[f].row(b);
      for (std::int64_t i = i0; i < i1; ++i) t.field[f].add(ids[i]);
    }
    if (const State::Ids& segment = s.q(LayoutField::Segment); segment.data != nullptr && s.prefix > 0) {
      t.segments.assign(segment.row(b) + i0, segment.row(b) + i1);
      finish(t.segments);
    }
    tiles.push_back(std::move(t));
  }
  return tiles;
}

// BlockMask::key_start: k_tile steps, unless some mask reads prefix_block: then the prefix
// slots are cut where their group changes (and every k_tile), and the keys proper start a
// tile at P. A query tile of one segment then finds every prefix tile full or empty.
std::vector<std::int64_t> key_starts(const State& s, std::int64_t k_tile) {
  const std::int64_t keys = s.prefix + s.lk;
  bool blocking = false;
  for (const std::vector<State::Op>& program : s.programs)
    for (const State::Op& op : program) blocking = blocking || op.kind == MaskKind::PrefixBlock;
  std::vector<std::int64_t> start;
  std::int64_t n = 0;
  if (blocking && s.prefix > 0 && s.prefix_segment.data != nullptr) {
    const std::int32_t* group = s.prefix_segment.data;
    while (n < s.prefix) {
      start.push_back(n);
      const std::int64_t first = n;
      while (++n < s.prefix && n - first < k_tile && group[n] == group[first]) {
      }
    }
  }
  for (; n < keys; n += k_tile) start.push_back(n);
  start.push_back(keys);
  return start;
}

std::vector<KeyTile> key_tiles(const State& s, std::int64_t b,
                               const std::vector<std::int64_t>& start) {
  std::vector<KeyTile> tiles;
  for (std::size_t kt = 0; kt + 1 < start.size(); ++kt) {
    KeyTile t;
    const std::int64_t n0 = start[kt], n1 = start[kt + 1];
    for (std::int64_t n = n0; n < std::min(n1, s.prefix); ++n) {
      t.has_prefix = true;
      if (s.prefix_segment.data != nullptr) t.prefix_groups.push_back(s.prefix_segment.data[n]);
    }
    finish(t.prefix_groups);
    for (std::int64_t j = std::max(n0, s.prefix) - s.prefix; j < n1 - s.prefix; ++j) {
      t.has_keys = true;
      if (!s.real_key(b, j)) {
        t.all_real = false;
        continue;
      }
      t.any_real = true;
      t.index.add(j);
      for (int f = 0; f < kLayoutFields; ++f)
        if (s.key[f].data != nullptr) t.field[f].add(s.key[f].row(b)[j]);
    }
    tiles.push_back(std::move(t));
  }
  return tiles;
}

}  // namespace

BlockMask compile_block_mask(const PairRules& rules, std::int64_t q_tile, std::int64_t k_tile) {
  if (q_tile <= 0 || k_tile <= 0)
    throw Error("compile_block_mask: tile sizes must be positive, got " + std::to_string(q_tile) +
                " x " + std::to_string(k_tile));
  const State& s = rules.state();
  BlockMask mask;
  mask.q_tile = q_tile;
  mask.k_tile = k_tile;
  mask.batch = s.batch;
  mask.groups = static_cast<std::int64_t>(s.programs.size());
  mask.q_tiles = (s.lq + q_tile - 1) / q_tile;
  mask.key_start = key_starts(s, k_tile);
  mask.k_tiles = static_cast<std::int64_t>(mask.key_start.size()) - 1;
  mask.lq = s.lq;
  mask.lk = s.prefix + s.lk;
  mask.head_group = s.head_program;
  mask.row_begin.reserve(mask.batch * mask.groups * mask.q_tiles + 1);
  mask.row_begin.push_back(0);

  State::Op call_causal;
  call_causal.kind = MaskKind::Causal;
  std::vector<Cover> stack;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const std::vector<QueryTile> queries = query_tiles(s, b, q_tile);
    const std::vector<KeyTile> keys = key_tiles(s, b, mask.key_start);
    for (const std::vector<State::Op>& program : s.programs) {
      for (const QueryTile& q : queries) {
        for (std::int64_t kt = 0; kt < mask.k_tiles; ++kt) {
          const KeyTile& k = keys[kt];
          Cover keys_cover = Cover::Empty;
          if (k.any_real) {
            keys_cover =
                evaluate(program, stack, [&](const State::Op& op) { return on_keys(op, q, k); });
            if (s.causal && keys_cover != Cover::Empty) {
              const Cover c = on_keys(call_causal, q, k);
              keys_cover = c == Cover::Empty     ? c
                           : c == Cover::Partial ? Cover::Partial
                                                 : keys_cover;
            }
            if (keys_cover == Cover::Full && !k.all_real) keys_cover = Cover::Partial;
          }
          Cover cover = keys_cover;
          if (k.has_prefix) {
            const Cover prefix_cover =
                evaluate(program, stack, [&](const State::Op& op) { return on_prefix(op, q, k); });
            cover = !k.has_keys || prefix_cover == keys_cover ? prefix_cover : Cover::Partial;
          }
          if (cover == Cover::Empty) continue;
          mask.tile.push_back(static_cast<std::int32_t>(kt));
          mask.full.push_back(cover == Cover::Full);
        }
        mask.row_begin.push_back(static_cast<std::int64_t>(mask.tile.size()));
      }
    }
  }
  return mask;
}

BlockMask compile_block_mask(const AttentionCall& call, std::int64_t q_tile, std::int64_t k_tile) {
  return compile_block_mask(PairRules(call), q_tile, k_tile);
}

}  // namespace strata::attn
