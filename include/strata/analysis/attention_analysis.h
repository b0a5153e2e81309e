#pragma once
// `strata analyze attention`: a seq2seq model's encoder self-attention per layer, averaged over
// heads, as seed 000 draws it to show how much the queries read the prefix keys (§4 Figure 1,
// A.4 Figure 6): figures, the raw matrices and a per-layer summary.
#include <cstddef>
#include <string>

namespace strata::analysis {

struct AttentionAnalysisOptions {
  std::string model;   // a seq2seq run directory or checkpoint
  std::string data;    // JSONL; its first `examples` usable documents are drawn
  std::string out;     // default MODEL/attention
  std::string adapter;  // an adapter file (a tuned prefix, say) to load onto `model`, its base; empty: none
  std::size_t examples = 4;
  bool quiet = false;  // no progress output
};

// Writes to OUT, per encoder layer L (from 0), layerL.svg and layerL.png with the examples side
// by side; attention.safetensors (layer{L}.example{E}: [tokens, P + tokens] float32);
// attention.json with per layer P, the mean prefix mass and row entropy; with prefixes,
// spectrum.json. Prints the per-layer table.
void run_attention_analysis(const AttentionAnalysisOptions& options);

}  // namespace strata::analysis
