#pragma once
// An attention call kept after it ran, owning what it read, and its attention weights
// recomputed a band of queries at a time: what `strata explore` shows, on documents whose
// whole weight matrices (heads × L × L) would not fit in memory.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "strata/attn/attention_call.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/pair_rules.h"
#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::attn {

struct KeptCall {
  at::Tensor q, k;  // [1, H, Lq, Dh], [1, H, P + Lk, Dh], detached; the values are not kept
  at::Tensor key_padding, query_padding, prefix_segment, bias_table, dense_bias;
  bool causal = false;
  std::int64_t query_offset = 0, prefix_len = 0;
  std::optional<LayerSpec> spec;  // none: every head plain
  std::optional<TokenLayout> query_layout, key_layout;

  // A copy of what `call` reads, detached. strata::Error unless the call has one batch item.
  static KeptCall of(const AttentionCall& call);
  // The call again (its values are the keys: weights do not read them), pointing into this.
  AttentionCall call() const;
  std::int64_t heads() const { return q.size(1); }
  std::int64_t queries() const { return q.size(2); }
  std::int64_t keys() const { return k.size(2); }  // P + Lk
  // Whether the fused kernel runs some heads of this call in token order (their tiles are
  // then skipped in that order, not in document order).
  bool runs_token_sorted() const;
};

// The weights of a kept call, as attend_keeping_weights gives them in eval mode (no dropout,
// no Gumbel noise): scores q·kᵀ/√Dh plus the relation and dense biases, the visibility of
// PairRules (its compiled per-row program, which the fused kernel is tested to agree with),
// the head's normaliser, one-hot rows for fixed patterns, zeros for a row that sees nothing.
// Only the keys of the block-mask tiles the band's queries visit are computed, so a sparse
// spec costs what it shows. Memory: one band's H × rows × (P + Lk) weights. A top-p head's
// kept keys depend on every query's weights: they are found once, by a pass over all bands,
// on the first band asked.
class BandWeights {
 public:
  explicit BandWeights(const KeptCall& call);  // `call` must outlive this
  // [H, q1 - q0, P + Lk] float for queries [q0, q1); `visible`, when given, receives the
  // visibility bool [H, q1 - q0, P + Lk]. strata::Error outside [0, Lq].
  at::Tensor rows(std::int64_t q0, std::int64_t q1, at::Tensor* visible = nullptr) const;
  // Which keys queries [q0, q1) may see, bool [H, q1 - q0, P + Lk].
  at::Tensor visible_rows(std::int64_t q0, std::int64_t q1) const;
  const PairRules& rules() const { return rules_; }
  // The block mask the fused kernel compiles for this call (64 × 64 tiles).
  const BlockMask& block_mask() const { return tiles_; }

 private:
  // The keys of the block-mask tiles some head visits for a band of queries: the only ones
  // whose weight can be nonzero. Runs of columns [begin, end), ascending, and their index.
  struct Columns {
    std::vector<std::pair<std::int64_t, std::int64_t>> runs;
    at::Tensor index;  // int64 [count]
    std::int64_t count = 0;
    bool all = false;  // every key
  };
  Columns columns(std::int64_t q0, std::int64_t q1) const;
  at::Tensor scores(std::int64_t q0, std::int64_t q1, const Columns& columns) const;  // with biases, [H, r, c]
  at::Tensor visible_columns(std::int64_t q0, std::int64_t q1, const Columns& columns) const;  // bool [H, r, c]
  at::Tensor widened(const at::Tensor& selected, const Columns& columns) const;  // [H, r, c] -> [H, r, P + Lk]
  void find_top_p_keys() const;

  const KeptCall& call_;
  AttentionCall view_;
  PairRules rules_;
  BlockMask tiles_;
  bool every_column_;  // a head with a fixed pattern: every key is computed
  mutable std::vector<at::Tensor> keep_;  // per head: [K] float keep mask of a top-p head
  mutable bool keep_found_ = false;
};

}  // namespace strata::attn
