#pragma once
// PairRules: one attention call's visibility and relations, for the kernels, the block-mask
// compiler and tools that draw or count what each head sees. Visibility here is everything
// about a pair (b, head, query i, key n in [0, P + Lk)): the head's mask expression, the
// call's causal flag (index-based, with query_offset) and key padding. Relations are the
// layer's bias-table ids (spec.h: RelationKind), -1 where no bias applies (prefix slots, or
// a layer without a relation).
//
// PairRules owns what it reads (int32 CPU copies of the layout fields it needs, the spec by
// value), so it outlives the call: the fused kernel's backward keeps it. Copies share one
// immutable state. Built once per call (linear in the tokens, no per-pair work); every method
// is thread-safe.
#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"

namespace strata::attn {

class PairRules {
 public:
  // strata::Error when the spec needs a layout field, prefix segments or a table the call
  // lacks, or when shapes disagree; the message names the field.
  explicit PairRules(const AttentionCall& call);

  std::int64_t batch() const;
  std::int64_t heads() const;
  std::int64_t queries() const;     // Lq
  std::int64_t keys() const;        // P + Lk
  std::int64_t prefix_len() const;  // P
  const LayerSpec& spec() const;    // the call's spec, or a plain one for a null spec

  // The element rule, written for clarity (the reference kernel's source of truth). For a
  // head with a fixed pattern: n == fixed_key(b, h, i).
  bool visible(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t n) const;
  // visible() for the tile [i0, i1) × [n0, n1) into out[(i - i0) * ld + (n - n0)] (1/0);
  // evaluates the head's compiled mask program over whole rows.
  void visible_tile(std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t i1,
                    std::int64_t n0, std::int64_t n1, std::uint8_t* out, std::int64_t ld) const;

  // The same tile as runs, when every row sees one run of keys in [n0, n1): columns
  // [first[r], last[r]) from n0 for query i0 + r (0, 0 when it sees none). For heads whose mask
  // is built from window, causal, global, blocks and all by And and Or, with the call's causal
  // flag, on keys past the prefix and without padding; false for other heads, and for a tile
  // where some row's keys form two runs (a window apart from the global keys), leaving the
  // arrays of no use (visible_tile then tells). O(rows): the fused kernel's edge tiles.
  bool row_runs(std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t i1, std::int64_t n0,
                std::int64_t n1, std::int64_t* first, std::int64_t* last) const;

  bool has_relation() const;
  std::int32_t relation(std::int64_t b, std::int64_t i, std::int64_t n) const;
  void relation_tile(std::int64_t b, std::int64_t i0, std::int64_t i1, std::int64_t n0,
                     std::int64_t n1, std::int32_t* out, std::int64_t ld) const;
  // The relation every pair of the tile [i0, i1) × [n0, n1) has, when it is one (-1: no
  // bias): a tile of prefix slots only, or, for the section-level biases, queries of one
  // section and keys of one section. Nullopt otherwise (then relation_tile() tells). O(rows +
  // columns), so the fused kernel can add and differentiate one number for most tiles.
  std::optional<std::int32_t> uniform_relation(std::int64_t b, std::int64_t i0, std::int64_t i1,
                                               std::int64_t n0, std::int64_t n1) const;

  // The fixed pattern's key for query i of head h, or -1 when the row gives zeros.
  FixedPattern fixed(std::int64_t h) const;
  std::int64_t fixed_key(std::int64_t b, std::int64_t h, std::int64_t i) const;

  // The resolved state, for the block-mask compiler.
  struct State;
  const State& state() const { return *state_; }

 private:
  std::shared_ptr<const State> state_;
};

// The block mask of the call these rules were built from (block_mask.h); the AttentionCall
// overload builds PairRules first.
BlockMask compile_block_mask(const PairRules& rules, std::int64_t q_tile = 64,
                             std::int64_t k_tile = 64);
// The block mask the fused kernel runs for a call that brings none (block_mask.h).
BlockMask fused_block_mask(const PairRules& rules);

// The T5 relative-position bucket of d = j - i. Bidirectional: buckets / 2 per sign (d > 0
// above), the first half of those exact, the rest log-spaced up to max_distance, then
// clamped. Unidirectional (T5's decoder): all buckets for d <= 0, and d > 0 is bucket 0.
std::int32_t t5_bucket(std::int64_t d, std::int64_t buckets, std::int64_t max_distance,
                       bool bidirectional = true);

// The layout fields masks and relations read.
enum class LayoutField : int { Section, Paragraph, Sentence, Segment, Document, Token, Repeated };
inline constexpr int kLayoutFields = 7;

struct PairRules::State {
  // One [B or 1, L] int32 field; batch_stride 0 when it is shared by the batch.
  struct Ids {
    at::Tensor hold;
    const std::int32_t* data = nullptr;
    std::int64_t batch_stride = 0;
    const std::int32_t* row(std::int64_t b) const { return data + b * batch_stride; }
  };
  // The mask expression in postfix order: primitives push a value, And/Or pop `arity`
  // operands, Not pops one.
  struct Op {
    MaskKind kind = MaskKind::All;
    std::int64_t a = 0, b = 0;  // Window: left, right; Global: count; Blocks: length, blocks before
    std::int32_t arity = 0;
  };

  std::int64_t batch = 0, heads = 0, lq = 0, lk = 0, prefix = 0, query_offset = 0;
  bool causal = false;
  LayerSpec spec;
  std::array<Ids, kLayoutFields> query, key;  // undefined (data == nullptr) where not needed
  Ids prefix_segment;                         // [P], batch_stride 0
  at::Tensor padding_hold;                    // [B or 1, Lk] uint8, 1 = real key
  const std::uint8_t* padding = nullptr;      // null = no padding
  std::int64_t padding_stride = 0;

  std::vector<std::vector<Op>> programs;   // one per distinct mask among non-fixed heads
  std::vector<std::int32_t> head_program;  // [H] -> program, -1 for fixed heads
  std::int32_t max_stack = 1;              // deepest operand stack of any program

  // Relations. T5Buckets / SectionDistance: id = buckets[d - bucket_min] for the difference
  // d (key index minus query index, or key section minus query section). Hibrids: id =
  // hibrids[b * hibrids_stride + s_query * sections + s_key].
  std::vector<std::int32_t> buckets;
  std::int64_t bucket_min = 0;
  std::vector<std::int32_t> hibrids;
  std::int64_t hibrids_stride = 0, sections = 0;

  const Ids& q(LayoutField f) const { return query[static_cast<int>(f)]; }
  const Ids& k(LayoutField f) const { return key[static_cast<int>(f)]; }
  bool real_key(std::int64_t b, std::int64_t j) const {
    return padding == nullptr || padding[b * padding_stride + j] != 0;
  }
};

// The field an equality predicate compares (SameSection -> Section, ...).
LayoutField field_of(MaskKind kind);

}  // namespace strata::attn
