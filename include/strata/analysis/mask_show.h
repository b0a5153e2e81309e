#pragma once
// `strata attn show`: which keys each query may see under an attention spec, drawn per head on
// a real document's layout, with each head's sparsity and block-mask tile density.
#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::analysis {

struct MaskShowOptions {
  std::string spec;               // a layer spec in JSON (a file)
  std::string doc;                // Markdown, a man page or plain text
  std::string tokenizer;          // a tokenizer directory or file; empty: bytes, one token per byte
  std::string out = "attn-show";  // output directory
  std::string format = "svg";     // svg or png
  std::size_t max_tokens = 512;   // keep the first N tokens; 0: all
  int segments = 1;               // the tokens split evenly into this many segments
  std::int64_t prefix = 0;        // prefix slots before the keys, split evenly among the segments
};

// Writes OUT/head-H.FORMAT per head and OUT/sparsity.json, and prints each head's mask,
// sparsity and tile density. strata::Error for an unreadable spec or document, or a picture of
// more than 2^26 pairs.
void run_mask_show(const MaskShowOptions& options);

}  // namespace strata::analysis
