#pragma once
// Layout: the per-token integer ids the attention engine reads (position, section,
// paragraph, sentence, segment, token id), plus the document's section tree, from which
// tree relations such as PathLen and LvlDiff (seed 001 §3.1) are derived.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

// The section tree flattened in document (pre-)order: index 0 is the root (the document
// itself), children follow their parent, and index order is the order of appearance.
struct SectionTree {
  std::vector<int> parent;  // parent[0] == -1
  std::vector<int> depth;   // depth[0] == 0; a top-level section has depth 1
  std::vector<std::string> heading;

  static SectionTree from_document(const Document& document);
  int size() const { return static_cast<int>(parent.size()); }
  int lowest_common_ancestor(int x, int y) const;
  // Length of the shortest tree path between sections x and y (edges), signed: positive
  // when y comes after x in the document, negative when before, 0 when x == y.
  int path_len(int x, int y) const;
  // Level difference from x to y: depth(y) - depth(x).
  int lvl_diff(int x, int y) const { return depth[y] - depth[x]; }
};

struct LayoutOptions {
  int segments = 1;             // K of the even split into segments (UniBlock)
  bool add_bos = false;         // prepend the tokenizer's bos token
  bool add_eos = false;         // append the tokenizer's eos token
  std::size_t max_tokens = 0;   // truncate to this many tokens (bos/eos included); 0 = no limit
};

// Ids are indices in document order. Tokens outside any sentence (bos, eos) have
// paragraph == sentence == -1 and belong to the root section (0).
struct Layout {
  std::vector<std::int32_t> token;
  std::vector<std::int32_t> position;
  std::vector<std::int32_t> section;    // index into tree
  std::vector<std::int32_t> paragraph;
  std::vector<std::int32_t> sentence;
  std::vector<std::int32_t> segment;    // 0..K-1, an even split of positions
  SectionTree tree;

  std::size_t size() const { return token.size(); }
};

// Tokenizes the document sentence by sentence, so every token has exactly one sentence.
// Each sentence is encoded together with the whitespace that precedes it inside its
// paragraph, so byte-level BPE sees the same leading spaces as on the whole paragraph.
Layout make_layout(const Document& document, const Tokenizer& tokenizer,
                   const LayoutOptions& options = {});

// Segment of position p when n positions are split evenly into k segments.
inline std::int32_t even_segment(std::size_t p, std::size_t n, int k) {
  return n == 0 ? 0 : static_cast<std::int32_t>(p * static_cast<std::size_t>(k) / n);
}

}  // namespace strata
