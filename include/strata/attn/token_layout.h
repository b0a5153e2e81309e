#pragma once
// The structure of a batch of token sequences as int32 tensors, the form that masks and
// relations read: per token [B, L] ids, per batch item the section tree's relations [B, S, S]
// (S = the most sections of any item; never L × L). A field a spec does not need may be left
// undefined; the engine names the missing field when a spec needs it.
#include <ATen/core/Tensor.h>

#include <vector>

#include "strata/attn/spec.h"
#include "strata/doc/layout.h"

namespace strata::attn {

struct TokenLayout {
  at::Tensor section, paragraph, sentence, segment, document, token;  // [B, L] int32
  at::Tensor repeated;  // [B, L] int32: 1 where the token occurs more than once in its document
  at::Tensor path_len;  // [B, S, S] int32: signed PathLen between sections (seed 001 §3.1)
  at::Tensor lvl_diff;  // [B, S, S] int32: LvlDiff between sections
  at::Tensor section_depth;  // [B, S] int32: depth of each section (root 0)
  // [B, L] int32: the task each token's item belongs to, when one model serves several
  // (multi-task runs; conditional attention reads it). batch_layouts leaves it undefined. Last,
  // so that the fields above keep their places in aggregate initialisation.
  at::Tensor task;

  std::int64_t batch() const;   // from the first defined per-token field
  std::int64_t length() const;
};

// Stacks per-document layouts into a batch padded to `length` tokens (0 = the longest).
// Padding positions get section 0, sentence/paragraph -1, segment/document of the last real
// token, token id -1 and repeated 0. Every token of an item gets document 0 (one document per
// item); packed sequences set `document` themselves. path_len/lvl_diff/section_depth are padded
// with 0 to the batch's most sections. strata::Error when an item is longer than `length`.
TokenLayout batch_layouts(const std::vector<const Layout*>& layouts, std::int64_t length = 0);

// How many ordered pairs of a tree's sections a relation's table is too small for (they share
// its edge entries: spec.h tree_relation_clamped), out of how many.
struct TreeClamping {
  std::int64_t pairs = 0, clamped = 0;
};
TreeClamping tree_clamping(const Relation& relation, const SectionTree& tree);

// The rows `index` (int64 [N]) of every defined field: batch items reordered or repeated, as
// beam search does with the encoder's output. Fields shared by the batch (size 1) stay.
TokenLayout select_items(const TokenLayout& layout, const at::Tensor& index);

// A tree relation's bias-table id (spec.h: tree_relation_id) for every pair of sections:
// [B, S, S] int32 from path_len and lvl_diff [B, S, S] and, for HibridsSelected,
// section_depth [B, S] (may be undefined otherwise). Shapes are the caller's to check.
at::Tensor section_relation_ids(const Relation& relation, const at::Tensor& path_len,
                                const at::Tensor& lvl_diff, const at::Tensor& section_depth);

}  // namespace strata::attn
