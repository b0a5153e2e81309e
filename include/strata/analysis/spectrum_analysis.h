#pragma once
// `strata analyze spectrum`: prefix-tuned seq2seq models compared by the normalised cumulative
// singular values of their encoder attention on the prefix keys (seed 000 §6.3, A.7 Figure 7),
// lower and upper encoder layers, one curve per model.
#include <cstddef>
#include <string>
#include <vector>

namespace strata::analysis {

struct SpectrumAnalysisOptions {
  std::vector<std::string> models;  // seq2seq run directories or checkpoints
  std::vector<std::string> labels;  // one per model, or none (the paths)
  std::string data;                 // JSONL; its first `examples` usable documents are analysed
  std::string out;                  // default FIRST_MODEL/spectrum
  std::size_t examples = 100;
  // Each head's map instead of the head-averaged one: a curve per (example, layer, head),
  // averaged; the head average can look low-rank when each head is not (or the reverse).
  bool per_head = false;
  bool quiet = false;  // no progress output
};

// Writes OUT/spectrum.json and spectrum.svg (two panels, a curve per model) and prints per
// model the area under each curve and the index where it reaches 0.9. strata::Error for a model
// without prefixes or labels that do not match the models.
void run_spectrum_analysis(const SpectrumAnalysisOptions& options);

}  // namespace strata::analysis
