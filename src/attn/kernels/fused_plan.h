#pragma once
// What the fused kernel's forward and backward share: the call resolved into plain numbers
// and pointers (FusedPlan, built once per call and kept by the autograd node), raw views of
// the compute-dtype tensors (FusedInputs), and the score tile (ScoreTile): scale * Q K^T,
// plus the table and dense biases, the normaliser's noise and temperature, and -inf on
// hidden pairs, for one (batch item, head, query tile, key tile). Forward, the top-p passes
// and backward all build scores through ScoreTile, so they agree on every element.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "strata/attn/counter_random.h"
#include "strata/attn/pair_rules.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/spec.h"
#include "strata/attn/tile_gemm.h"

namespace strata::attn {

struct FusedHead {
  std::int32_t group = -1;  // block-mask head group; -1 for a fixed pattern
  NormaliserKind normaliser = NormaliserKind::Softmax;
  double inv_tau = 1.0;  // Gumbel
  double top_p = 1.0;    // TopP
  bool fixed() const { return group < 0; }
};

// Rows [r0, r0 + rows) of a tile over its columns [lo, lo + cols): a part of a partial tile
// that the kernel runs as a tile of its own.
struct Strip {
  std::int64_t r0, rows, lo, cols;
};

// A partial tile is run in strips of kStripRows rows (two of the micro-kernel's row blocks),
// each over the columns its rows see, unless that saves under a fifth of the tile's 16-column
// vectors, when it runs whole. A window's edge cuts its tiles diagonally, so a whole tile
// computes twice the pairs it shows; in strips, about 1.2 times.
constexpr std::int64_t kStripRows = 12;
constexpr std::int64_t strips_per_tile(std::int64_t rows) { return (rows + kStripRows - 1) / kStripRows; }

// The strips of a `rows` x `cols` partial tile whose row r sees columns first[r] .. last[r]
// (at most, or exactly: the predicate still decides), written to `out` (room for
// strips_per_tile(rows)); returns how many: 0 when no row sees anything, 1 whole strip when
// strips save too little.
std::int64_t strips_of(const std::int64_t* first, const std::int64_t* last, std::int64_t rows, std::int64_t cols,
                       Strip* out);

// A partial tile whose every row sees one run of keys: the runs (tile columns), and its strips.
struct EdgeTile {
  const std::int64_t* first;
  const std::int64_t* last;
  std::span<const Strip> strips;
};

// The block mask's partial tiles whose rows are runs (PairRules::row_runs), worked out once a
// call: runs depend on neither the batch item nor the head within a group, and forward and
// backward visit the same tiles, so working them out per (batch item, head, pass) did the
// same work 2 B H times over (1 % of a window's time at L = 1,024). Kept for batch item 0's
// rows of the block mask, which every item's rows repeat when runs apply (runs decline for
// padding, the one thing that tells items apart).
class EdgeTiles {
 public:
  EdgeTiles() = default;
  // `group_head`: a head of each group of the block mask.
  EdgeTiles(const PairRules& rules, const BlockMask& mask, const std::vector<std::int64_t>& group_head);

  // The entry e of block-mask row (b, g, qt) (key tile mask.tile[e]), when partial and its
  // rows are runs; nullopt otherwise (the byte predicate decides).
  std::optional<EdgeTile> find(const BlockMask& mask, std::int64_t b, std::int64_t g, std::int64_t qt,
                               std::int64_t e) const;

 private:
  std::int64_t rows_ = 0, max_strips_ = 0;  // a tile's rows (q_tile) and strips at most
  std::vector<std::int32_t> slot_;          // per entry of batch item 0's rows: its tile's slot, or -1
  std::vector<std::int64_t> first_, last_;  // [slot][rows_]
  std::vector<Strip> strips_;               // [slot][max_strips_]
  std::vector<std::int64_t> strip_count_;   // [slot]
};

struct FusedPlan {
  PairRules rules;
  BlockMask mask;
  std::vector<FusedHead> head;  // one per head
  // keys = P + Lk; relations = bias-table columns (0 without a table).
  std::int64_t batch = 0, heads = 0, lq = 0, keys = 0, dim = 0, relations = 0;
  bool has_table = false, has_dense = false;
  // Element strides of the dense bias over batch and heads; 0 where it broadcasts.
  std::int64_t dense_batch_stride = 0, dense_head_stride = 0;
  double scale = 1.0;
  bool gumbel_noise = false;  // training: Gumbel heads add noise
  double dropout = 0.0;       // active rate (0 unless training)
  std::int32_t first_kept = 0;  // first_kept_draw(dropout): the vectorised form of its rule
  std::uint64_t seed = 0;
  bool any_top_p = false;
  // [B, Lq], 1 for a query whose weights count in top-p's key impact (query_votes.h); null
  // when every query's do.
  const std::uint8_t* votes = nullptr;
  at::Tensor votes_hold;
  EdgeTiles edges;

  FusedPlan(PairRules rules, BlockMask mask, const AttentionCall& call);

  std::int64_t mask_row(std::int64_t b, std::int64_t h, std::int64_t qt) const {
    return mask.row(b, head[h].group, qt);
  }
  // Dropout's factor for one weight: 1 / (1 - rate) where kept, 0 where dropped, 1 when
  // dropout is off. A rate of 1 drops everything.
  template <class T>
  T dropout_factor(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t n) const {
    if (dropout <= 0) return T(1);
    if (!counter_keep(seed, dropout, b, h, i, n)) return T(0);
    return dropout < 1 ? static_cast<T>(1.0 / (1.0 - dropout)) : T(0);
  }
  std::int64_t q_begin(std::int64_t qt) const { return mask.q_begin(qt); }  // first query of tile qt
  std::int64_t q_rows(std::int64_t qt) const { return mask.q_rows(qt); }    // queries of tile qt
  std::int64_t k_begin(std::int64_t kt) const { return mask.k_begin(kt); }  // first key of tile kt
  std::int64_t k_cols(std::int64_t kt) const { return mask.k_cols(kt); }    // keys of tile kt
};

// One of q, k, v, the output or a gradient, [B, H, L, D] with each row's D elements
// contiguous but rows and heads at any stride: a projection's output viewed as heads is
// [B, L, H, D] in memory (rows H * D apart, heads D apart), and the kernel reads and writes it
// so, where a contiguous copy each way would cost a pass over memory that does not scale with
// threads. Null data for a gradient not wanted.
template <class T>
struct HeadRows {
  T* data = nullptr;
  std::int64_t batch_stride = 0, head_stride = 0, row_stride = 0;

  T* at(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return data + b * batch_stride + h * head_stride + i * row_stride;
  }
  std::int64_t ld() const { return row_stride; }  // the leading dimension of a run of rows
  explicit operator bool() const { return data != nullptr; }
};

// Zeroes `rows` runs of `d` elements, `ld` apart: a task's rows of the output or of a
// gradient, before it adds to them.
template <class T>
void zero_rows(T* first, std::int64_t ld, std::int64_t rows, std::int64_t d) {
  for (std::int64_t r = 0; r < rows; ++r) std::fill_n(first + r * ld, d, T(0));
}

// Zeroes the rows among `count` from `first` (`ld` apart, `d` wide) that no product wrote
// (written[r] == 0); nothing for a null `first` (a gradient not wanted).
template <class T>
void zero_unwritten(T* first, std::int64_t ld, std::int64_t d, const std::uint8_t* written, std::int64_t count) {
  if (first == nullptr) return;
  for (std::int64_t r = 0; r < count; ++r)
    if (!written[r]) std::fill_n(first + r * ld, d, T(0));
}

// A product into `count` rows of an output or gradient (from `first`, `ld` apart, `d` wide),
// where written[r] says whether an earlier product reached row r, so that nothing is zeroed
// ahead: run as product(m0, m1, beta) over rows [m0, m1) alike in that, beta 0 where none was
// written (the product writes them) and 1 where all were (it adds). A window's strips reach new
// rows at one end, so two runs at most; with more, the unwritten rows are zeroed and one product
// adds to all. Marks the rows written.
template <class T, class Product>
void into_rows(T* first, std::int64_t ld, std::int64_t d, std::uint8_t* written, std::int64_t count,
               const Product& product) {
  const std::uint8_t* begin = written;
  const std::uint8_t* end = written + count;
  const std::uint8_t head = written[0];
  const std::uint8_t* change = std::find(begin, end, static_cast<std::uint8_t>(!head));
  const T head_beta = head ? T(1) : T(0);
  if (change == end) {
    product(0, count, head_beta);
  } else if (std::find(change, end, head) == end) {
    product(0, change - begin, head_beta);
    product(change - begin, count, T(1) - head_beta);
  } else {
    zero_unwritten(first, ld, d, written, count);
    product(0, count, T(1));
  }
  std::fill_n(written, count, std::uint8_t{1});
}

// Raw views of the compute-dtype tensors: q [B, H, Lq, D], k and v [B, H, N, D], table
// [H, R], dense [B or 1, H or 1, Lq, N] (the last two contiguous).
template <class T>
struct FusedInputs {
  HeadRows<const T> q, k, v;
  const T* table = nullptr;
  const T* dense = nullptr;
};

// A thread's copy of one head at a time (HeadTranspose, HeadCopy): what head it holds, and a
// buffer grown as needed and kept from head to head.
template <class T>
class HeadBuffer {
 public:
  // The buffer for `head`, at least `elements` long, and whether it still has to be filled
  // (false when it holds `head` already; the caller fills it otherwise, every element).
  std::pair<T*, bool> for_head(const T* head, std::int64_t elements) {
    if (head == head_) return {buffer_.get(), false};
    if (elements > capacity_) {
      buffer_ = std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(elements));
      capacity_ = elements;
    }
    head_ = head;
    return {buffer_.get(), true};
  }

 private:
  const T* head_ = nullptr;  // the first row of the head held
  std::unique_ptr<T[]> buffer_;
  std::int64_t capacity_ = 0;  // elements buffer_ holds
};

// One (batch item, head)'s rows of k or v, [N, D], transposed key tile by key tile: tile t
// (keys key_start[t] .. key_start[t + 1], `cols` of them) becomes a [D, cols] block at offset
// key_start[t] * D. With it Q K^T and dO V^T are no-transpose tile products (~25 % faster than
// the transposed form) that read one contiguous block, where a whole [D, N] transpose would
// put a tile's D rows N apart: a page, and a TLB miss, per row at N = 16k. Kept while a thread
// stays on that head; one head per thread, not a copy of every head, which at a million tokens
// would be as large as k itself (2 GiB at 8 heads × 64).
template <class T>
class HeadTranspose {
 public:
  // `rows` is k or v, [B, H, N, D].
  const T* of(const HeadRows<const T>& rows, std::int64_t b, std::int64_t h, std::int64_t d,
              const std::vector<std::int64_t>& key_start);

  // Keys from n0 on, within the key tile that holds n0, in a head `of` returned: the first
  // element of that block's column n0, and the block's row stride (its tile's width).
  struct Columns {
    const T* data;
    std::int64_t ld;
  };
  static Columns columns(const T* head_t, std::int64_t d, const std::vector<std::int64_t>& key_start,
                         std::int64_t n0) {
    const auto tile = std::upper_bound(key_start.begin(), key_start.end(), n0) - 1;
    return {head_t + *tile * d + (n0 - *tile), tile[1] - *tile};
  }

 private:
  HeadBuffer<T> buffer_;
};

// One (batch item, head)'s rows of q, k, v or dO, [N, D], where a tile product reads them as B:
// copied to rows D apart when they lie kPackRowsApart (tile_gemm.h) or more elements apart, as
// in the projection's layout (H × D apart). Otherwise every tile product copies the band of B
// it reads, so a row of K or V was copied once per query tile, and a row of Q or dO once per
// key tile; here each is copied once per head. Kept while a thread stays on that head. A head
// of more than kMaxElements is left where it is (the products copy their bands as before), so
// that a million-token head is not held whole a second time.
template <class T>
class HeadCopy {
 public:
  static constexpr std::int64_t kMaxElements = std::int64_t{1} << 22;  // 16 MB of fp32

  // The head's rows (n of them, d wide) as rows of a product: the copy or the original.
  HeadRows<const T> of(const HeadRows<const T>& rows, std::int64_t b, std::int64_t h, std::int64_t n, std::int64_t d);

 private:
  HeadBuffer<T> buffer_;
};

// Scratch for one score tile, owned by one thread: O(tile²) memory.
template <class T>
class ScoreTile {
 public:
  explicit ScoreTile(const FusedPlan& plan);

  // How to run entry e of the block-mask row of (b, h, query tile qt): a full tile whole, a
  // partial one in strips (strips_of; none at all when the tile shows nothing). Every strip
  // of a partial tile is partial: it still evaluates the predicate.
  std::span<const Strip> strips(std::int64_t b, std::int64_t h, std::int64_t qt, std::int64_t e);

  // Fills scores() for one of the strips the last strips() returned: the values the
  // normaliser sees, -inf where hidden (by the predicate strips() evaluated, on a partial
  // tile). Also fills relations() when the layer has a bias table.
  void compute_strip(const FusedInputs<T>& in, std::int64_t b, std::int64_t h, const Strip& strip);
  // The same for query rows [i0, i0 + rows) and keys [n0, n0 + cols), into `s` (leading
  // dimension ld()): `partial` tiles evaluate the predicate; full ones skip it.
  void compute_into(T* s, const FusedInputs<T>& in, std::int64_t b, std::int64_t h,
                    std::int64_t i0, std::int64_t rows, std::int64_t n0, std::int64_t cols,
                    bool partial);
  // The same values for the keys key[0 .. count) (count <= the key tile, any keys), into
  // scores() columns 0 .. count; check[c] says whether key[c] needs the predicate (it lies
  // in a partial tile). Element by element where the tile methods run whole rows: for a
  // few scattered keys (the top-p passes).
  void compute_keys(const FusedInputs<T>& in, std::int64_t b, std::int64_t h, std::int64_t i0,
                    std::int64_t rows, const std::int64_t* key, const std::uint8_t* check,
                    std::int64_t count);

  // The factor each weight is multiplied by before it meets V: dropout's keep / (1 - rate)
  // times top-p's keep[n] (keep = null when the head does not truncate). False when every
  // factor is 1 (no dropout, and keep null or 1 on every column), leaving `factors()`
  // untouched.
  bool weight_factors(std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t rows,
                      std::int64_t n0, std::int64_t cols, const T* keep);

  // weights (rows x cols, this tile's stride) times dropout's factors, in place, where no head
  // truncates: the forward's use of weight_factors without a pass to write them first.
  void thin_weights(T* weights, std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t rows,
                    std::int64_t n0, std::int64_t cols) const;

  // dtable[relation] += ds[r][c] over the tile last computed (a layer with a bias
  // table): one sum for a tile whose pairs share a relation, run by run otherwise.
  void add_relation_grad(const T* ds, std::int64_t rows, std::int64_t cols, T* dtable) const;

  std::int64_t ld() const { return ld_; }
  T* scores() { return scores_.data(); }
  T* factors() { return factors_.data(); }

 private:
  // compute_into() before the predicate: scale * Q K^T, the biases, the normaliser's noise.
  void unmasked_into(T* s, const FusedInputs<T>& in, std::int64_t b, std::int64_t h, std::int64_t i0,
                     std::int64_t rows, std::int64_t n0, std::int64_t cols);
  // Dropout's counter row of query (b, h, i), and the factor a kept weight gets.
  std::uint64_t dropout_row(std::int64_t b, std::int64_t h, std::int64_t i) const;
  T dropout_kept() const;

  const FusedPlan& plan_;
  std::int64_t ld_;
  HeadTranspose<T> keys_t_;
  std::vector<T> scores_, factors_, gathered_;
  std::vector<std::int32_t> relations_;
  std::optional<std::int32_t> uniform_relation_;  // the last tile's, when it had one
  std::vector<std::uint8_t> visible_;
  std::vector<std::int64_t> hull_first_, hull_last_;  // a byte-predicate tile row's first and last + 1 visible column
  // The last strips(): its tile's first query and key, whether it was partial, and if so
  // whether its rows are runs (first_ and last_ then point at the plan's; visible_, the
  // predicate, decides otherwise), and the strips when not the plan's.
  std::int64_t strips_i0_ = 0, strips_n0_ = 0;
  bool strips_partial_ = false, strips_runs_ = false;
  const std::int64_t* first_ = nullptr;
  const std::int64_t* last_ = nullptr;
  std::vector<Strip> strips_;
};

}  // namespace strata::attn
