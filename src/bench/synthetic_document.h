#pragma once
// The long sectioned document `strata bench hibrids` encodes, and what its layout costs the
// kernel in memory against an L x L index.
#include <cstdint>

#include "strata/doc/layout.h"

namespace strata::bench {

inline constexpr int kSentenceTokens = 20;  // tokens a sentence

// `length` tokens in 60 sections (fewer when shorter) in document order forming a tree up to
// depth 4 (a section is at most one level deeper than the one before it), each 1 to 6 parts
// long, so lengths vary; sentences of 20 tokens and paragraphs of 4 sentences that restart
// with each section; token ids in a fixed scattered order over 1000 values. Everything comes
// from a fixed linear congruential sequence: every run sees the same tree.
Layout sectioned_document(std::int64_t length);

struct DocumentStats {
  int sections = 0, deepest = 0;       // the root aside
  std::int64_t shortest = 0, longest = 0;  // tokens of a section
  std::int64_t sentences = 0;
};

DocumentStats document_stats(const Layout& document);

// What the kernel reads to find a pair's relation id, against an L x L index.
struct LayoutMemory {
  std::int64_t per_token = 0;     // the [B, L] id tensors
  std::int64_t token_fields = 0;  // how many of them
  std::int64_t section = 0;       // path_len, lvl_diff [B, S, S] and section_depth [B, S]
  std::int64_t relation_ids = 0;  // the HIBRIDS relation's [B, S, S] ids
  std::int64_t sections = 0;      // S, the root included
  std::int64_t dense = 0;         // an L x L int64 index
  std::int64_t total() const { return per_token + section + relation_ids; }
};

// Builds tensors: call it after the children, once the parent may start libtorch's pools.
LayoutMemory layout_memory(const Layout& document);

}  // namespace strata::bench
