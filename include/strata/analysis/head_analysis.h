#pragma once
// `strata analyze heads`: which attention heads a trained model's task depends on (seed 003
// §3.1.1, §4.2.1): every head's importance on validation data, as a layers × heads table,
// heatmap (Figure 2 A, Figure 3) and JSON.
#include <cstddef>
#include <string>

namespace strata::analysis {

struct HeadAnalysisOptions {
  std::string model;                // a run directory or checkpoint
  std::string data;                 // its validation data (JSONL, as the model was trained on)
  std::string out;                  // default MODEL/heads
  std::string method = "taylor";    // taylor or head_mask
  std::string normalize = "layer";  // layer or none
  std::size_t max_examples = 0;     // the first N validation examples; 0: all
  std::size_t max_tokens = 4096;    // per batch (rows × longest)
  bool quiet = false;               // no progress output
};

// Loads the model inside its training task, writes OUT/importance.json, importance.svg and
// importance.png and prints the table, the most important head of each layer starred.
void run_head_analysis(const HeadAnalysisOptions& options);

}  // namespace strata::analysis
