#pragma once
// `strata analyze patterns`: how much of each encoder self-attention head's weight follows an
// interpretable pattern (seed 003 §3.1.3 Eq. 1, §4.2.2): the global relevance of every
// pattern for every head over validation data, the 3-sigma rule that keeps a pattern, and the
// top heads, as JSON, one heatmap per pattern (Figure 2 C) and a printed summary.
#include <cstddef>
#include <string>

namespace strata::analysis {

struct PatternAnalysisOptions {
  std::string model;  // a run directory or checkpoint (seq2seq or encoder)
  std::string data;   // its validation data (JSONL, as the model was trained on)
  std::string out;    // default MODEL/patterns
  // Pattern definitions: a JSON object {"name": "expression"} given inline, or the path of a
  // file holding one; empty: the built-in patterns only.
  std::string definitions;
  std::string patterns = "matching_token,intra_sentence,previous_token,next_token";  // comma-separated
  std::size_t top = 5;            // heads listed per pattern
  std::size_t max_examples = 0;   // the first N validation examples; 0: all
  std::size_t max_tokens = 4096;  // per batch (rows × longest)
  bool quiet = false;             // no progress output
};

// Checks the definitions and pattern names, then loads the model inside its training task,
// writes OUT/relevance.json, PATTERN.svg and PATTERN.png per pattern and prints a summary.
// strata::Error for an unknown pattern or a task that cannot hand its batches to the analysis.
void run_pattern_analysis(const PatternAnalysisOptions& options);

}  // namespace strata::analysis
