#pragma once
// `strata analyze biases`: the learned HIBRIDS bias tables of a trained seq2seq model drawn on
// seed 001 Figure 5's example section tree (§7.1): per (query section, key section) the bias of
// their relation, averaged over every head of every chosen layer that has a tree-relation table.
#include <string>

namespace strata::analysis {

struct BiasAnalysisOptions {
  std::string model;            // a run directory or checkpoint
  std::string out;              // default MODEL/biases
  std::string format = "both";  // svg (with values and labels), png (shading only) or both
  std::string layers = "all";   // which tables: encoder, decoder, sections (HIERENC's section layers) or all
};

// Writes to OUT a figure per side (encoder, decoder, sections; one per relation where a side's layers use
// several) and biases.json with the raw values, each cell's relation and the mean tables, and
// prints each figure's largest entries. strata::Error when the model has no such table.
void run_bias_analysis(const BiasAnalysisOptions& options);

}  // namespace strata::analysis
