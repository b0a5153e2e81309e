#include "strata/attn/block_mask.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "strata/attn/pair_rules.h"
#include "strata/attn/tile_gemm.h"
#include "strata/core/error.h"

namespace strata::attn {

std::int64_t BlockMask::q_tile_of(std::int64_t i) const {
  return std::upper_bound(query_start.begin(), query_start.end(), i) - query_start.begin() - 1;
}

namespace {

// The area of the tiles of group g (every group when g < 0) that `count` admits, over all pairs.
template <class Counted>
double visited_share(const BlockMask& m, std::int64_t g, Counted counted) {
  const std::int64_t first = g < 0 ? 0 : g, last = g < 0 ? m.groups : g + 1;
  double area = 0;
  for (std::int64_t b = 0; b < m.batch; ++b)
    for (std::int64_t group = first; group < last; ++group)
      for (std::int64_t qt = 0; qt < m.q_tiles; ++qt) {
        const std::int64_t r = m.row(b, group, qt);
        for (std::int64_t e = m.row_begin[r]; e < m.row_begin[r + 1]; ++e)
          if (counted(m.full[e] != 0))
            area += static_cast<double>(m.q_rows(qt) * m.k_cols(m.tile[e]));
      }
  const double total = static_cast<double>(m.batch * (last - first) * m.lq * m.lk);
  return total == 0 ? 0.0 : area / total;
}

}  // namespace

double BlockMask::tile_density(std::int64_t g) const {
  return visited_share(*this, g, [](bool) { return true; });
}

double BlockMask::partial_density(std::int64_t g) const {
  return visited_share(*this, g, [](bool full) { return !full; });
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
    case MaskKind::QuerySegment: {
      const Range& segment = q.field[static_cast<int>(LayoutField::Segment)];
      return from(segment.lo == op.a && segment.hi == op.a, segment.hi < op.a || segment.lo > op.a);
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

std::vector<QueryTile> query_tiles(const State& s, std::int64_t b,
                                   const std::vector<std::int64_t>& start) {
  std::vector<QueryTile> tiles;
  for (std::size_t qt = 0; qt + 1 < start.size(); ++qt) {
    QueryTile t;
    const std::int64_t i0 = start[qt], i1 = start[qt + 1];
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

// The layout fields whose changes cut tiles: those a mask compares by equality, and the
// section when the bias is section-level (a tile inside one pair of sections then adds one
// bias number instead of one per pair).
std::vector<LayoutField> cut_fields(const State& s) {
  std::vector<LayoutField> fields;
  const auto add = [&](LayoutField f) {
    if (std::find(fields.begin(), fields.end(), f) == fields.end()) fields.push_back(f);
  };
  for (const std::vector<State::Op>& program : s.programs)
    for (const State::Op& op : program)
      switch (op.kind) {
        case MaskKind::SameSentence:
        case MaskKind::SameParagraph:
        case MaskKind::SameSection:
        case MaskKind::SameSegment:
        case MaskKind::SameDocument: add(field_of(op.kind)); break;
        case MaskKind::QuerySegment: add(LayoutField::Segment); break;
        default: break;
      }
  switch (s.spec.bias.kind) {
    case RelationKind::Hibrids:
    case RelationKind::HibridsSelected:
    case RelationKind::SectionDistance: add(LayoutField::Section); break;
    default: break;
  }
  return fields;
}

// The positions p in (0, length) where one of `fields` changes between p - 1 and p in every
// item of the batch (tiles are shared by the batch, so only a shared change can cut them).
std::vector<std::int64_t> shared_changes(const std::array<State::Ids, kLayoutFields>& ids,
                                         const std::vector<LayoutField>& fields,
                                         std::int64_t batch, std::int64_t length) {
  std::vector<std::int64_t> cuts;
  for (std::int64_t p = 1; p < length && !fields.empty(); ++p) {
    bool everywhere = batch > 0;
    for (std::int64_t b = 0; b < batch && everywhere; ++b) {
      bool changes = false;
      for (const LayoutField f : fields) {
        const State::Ids& field = ids[static_cast<int>(f)];
        if (field.data != nullptr) changes = changes || field.row(b)[p] != field.row(b)[p - 1];
      }
      everywhere = changes;
    }
    if (everywhere) cuts.push_back(p);
  }
  return cuts;
}

// Appends the tile starts of [first, first + length): a grid of `tile` restarted at each cut
// (the tile before a cut may be shorter), spans shorter than a tile packed whole into one
// while they fit. The grid restarts rather than splitting a long span evenly because the tile
// products run whole 16-column vectors: 64 + 9 columns cost less than 37 + 36.
void push_tile_starts(std::vector<std::int64_t>& start, std::int64_t first, std::int64_t length,
                      std::int64_t tile, std::vector<std::int64_t> cuts) {
  cuts.push_back(length);
  std::size_t c = 0;  // the first cut past pos
  for (std::int64_t pos = 0; pos < length;) {
    start.push_back(first + pos);
    while (cuts[c] <= pos) ++c;
    if (cuts[c] - pos > tile) {
      pos += tile;
      continue;
    }
    while (c + 1 < cuts.size() && cuts[c + 1] - pos <= tile) ++c;
    pos = cuts[c];
  }
}

// Joins neighbouring tiles of start[from..] (the last ending at `end`) while the joined tile
// has no cut inside it and is at most `wide`: the pieces of a span longer than a tile become
// one key tile, while tiles that hold packed short spans, or a span's end and the spans packed
// after it, stay as they are. A joined tile lies inside one span, so it still meets every query
// tile whole (full or absent).
void join_inside_spans(std::vector<std::int64_t>& start, std::size_t from, std::int64_t end,
                       const std::vector<std::int64_t>& cuts, std::int64_t wide) {
  std::vector<std::int64_t> joined(start.begin(), start.begin() + static_cast<std::ptrdiff_t>(from));
  for (std::size_t i = from; i < start.size(); ++i) {
    const std::int64_t tile_end = i + 1 < start.size() ? start[i + 1] : end;
    if (joined.size() > from) {
      const std::int64_t begin = joined.back();
      const auto next_cut = std::upper_bound(cuts.begin(), cuts.end(), begin);
      if ((next_cut == cuts.end() || *next_cut >= tile_end) && tile_end - begin <= wide) continue;
    }
    joined.push_back(start[i]);
  }
  start = std::move(joined);
}

// The keys proper's tile starts: a grid of k_tile restarted at each cut, and where there are
// cuts, a long span's pieces then joined into key tiles of up to kJoinedKeyTiles grid tiles.
// Not without cuts: on a plain grid, wider tiles lost more at a window's edges than they
// gained (docs/results/speed.md).
void push_key_starts(std::vector<std::int64_t>& start, std::int64_t first, std::int64_t length,
                     std::int64_t k_tile, const std::vector<std::int64_t>& cuts) {
  const std::size_t from = start.size();
  push_tile_starts(start, first, length, k_tile, cuts);
  if (cuts.empty()) return;
  std::vector<std::int64_t> at(cuts);
  for (std::int64_t& c : at) c += first;
  join_inside_spans(start, from, first + length, at, kJoinedKeyTiles * k_tile);
}

std::vector<std::int64_t> query_starts(const State& s, std::int64_t q_tile) {
  std::vector<std::int64_t> start;
  push_tile_starts(start, 0, s.lq, q_tile, shared_changes(s.query, cut_fields(s), s.batch, s.lq));
  start.push_back(s.lq);
  return start;
}

// BlockMask::key_start: the keys proper as push_key_starts tiles them, and when some mask reads
// prefix_block, the prefix slots cut where their group changes (and every k_tile), so that a
// query tile of one segment finds every prefix tile full or empty. Without either cut, one
// grid runs over prefix slots and keys alike.
std::vector<std::int64_t> key_starts(const State& s, std::int64_t k_tile) {
  bool blocking = false;
  for (const std::vector<State::Op>& program : s.programs)
    for (const State::Op& op : program) blocking = blocking || op.kind == MaskKind::PrefixBlock;
  const std::vector<std::int64_t> cuts = shared_changes(s.key, cut_fields(s), s.batch, s.lk);
  std::vector<std::int64_t> start;
  if (blocking && s.prefix > 0 && s.prefix_segment.data != nullptr) {
    const std::int32_t* group = s.prefix_segment.data;
    for (std::int64_t n = 0; n < s.prefix;) {
      start.push_back(n);
      const std::int64_t first = n;
      while (++n < s.prefix && n - first < k_tile && group[n] == group[first]) {
      }
    }
    push_key_starts(start, s.prefix, s.lk, k_tile, cuts);
  } else if (!cuts.empty()) {
    push_tile_starts(start, 0, s.prefix, k_tile, {});
    push_key_starts(start, s.prefix, s.lk, k_tile, cuts);
  } else {
    push_tile_starts(start, 0, s.prefix + s.lk, k_tile, {});
  }
  start.push_back(s.prefix + s.lk);
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
  mask.query_start = query_starts(s, q_tile);
  mask.q_tiles = static_cast<std::int64_t>(mask.query_start.size()) - 1;
  mask.key_start = key_starts(s, k_tile);
  mask.k_tiles = static_cast<std::int64_t>(mask.key_start.size()) - 1;
  for (std::int64_t kt = 0; kt < mask.k_tiles; ++kt) mask.k_tile = std::max(mask.k_tile, mask.k_cols(kt));
  mask.lq = s.lq;
  mask.lk = s.prefix + s.lk;
  mask.head_group = s.head_program;
  mask.row_begin.reserve(mask.batch * mask.groups * mask.q_tiles + 1);
  mask.row_begin.push_back(0);

  State::Op call_causal;
  call_causal.kind = MaskKind::Causal;
  std::vector<Cover> stack;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const std::vector<QueryTile> queries = query_tiles(s, b, mask.query_start);
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

std::int64_t wide_key_tile() { return cpu_micro_kernel() == MicroKernel::Avx2 ? 96 : 64; }

BlockMask fused_block_mask(const PairRules& rules) {
  BlockMask mask = compile_block_mask(rules);
  if (mask.lq <= mask.q_tile) return mask;  // one query tile either way (a decoding step)
  const LayerSpec& spec = rules.spec();
  for (std::int64_t h = 0; h < rules.state().heads; ++h)
    if (spec.head(h).normaliser.kind == NormaliserKind::TopP) return mask;
  const std::int64_t rows = static_cast<std::int64_t>(mask.row_begin.size()) - 1;
  std::int64_t keys = 0;
  for (const std::int32_t t : mask.tile) keys += mask.k_cols(t);
  if (rows <= 0 || keys < kWideRowKeys * rows) return mask;
  BlockMask tall = compile_block_mask(rules, kWideQueryTile, wide_key_tile());
  // The forward shares out (item, head, query tile) tasks: keep enough for every thread.
  const std::int64_t tasks = tall.batch * rules.state().heads * tall.q_tiles;
  return tasks >= kTasksPerThread * at::get_num_threads() ? tall : mask;
}

BlockMask fused_block_mask(const AttentionCall& call) { return fused_block_mask(PairRules(call)); }

}  // namespace strata::attn
