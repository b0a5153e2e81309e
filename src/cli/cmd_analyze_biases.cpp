// strata analyze biases: the learned HIBRIDS bias tables of a trained model drawn on seed 001
// Figure 5's example section tree (§7.1).
#include <memory>

#include "commands.h"
#include "strata/analysis/bias_analysis.h"

namespace strata::cli {

void register_analyze_biases(CLI::App& analyze) {
  CLI::App* biases = analyze.add_subcommand(
      "biases",
      "Draw a seq2seq model's learned HIBRIDS biases as seed 001 Figure 5 does: on an example "
      "section tree (§1 > §1.1 > §1.1.1 > §1.1.1.1, §1.2; §2 > §2.1), one cell per (query "
      "section, key section) holding the bias of their relation, averaged over every head of "
      "every layer with a tree-relation table, × 100, blue positive and orange negative. The "
      "encoder's tables (HIBRIDS-ENC), the decoder's (HIBRIDS-DEC) and those of HIERENC's section layers "
      "(model.section_encoder_hibrids, seed 001 Table 5) get a figure each; "
      "OUT/biases.json holds the raw values, each cell's relation and the mean tables.");
  auto options = std::make_shared<analysis::BiasAnalysisOptions>();
  biases->add_option("--model", options->model, "a run directory or checkpoint of `strata train`")->required();
  biases->add_option("--out", options->out, "output directory (default: MODEL/biases)");
  biases->add_option("--format", options->format, "svg (with values and labels), png (shading only) or both")
      ->check(CLI::IsMember({"svg", "png", "both"}))
      ->capture_default_str();
  biases->add_option("--layers", options->layers, "which tables: encoder, decoder, sections or all")
      ->check(CLI::IsMember({"encoder", "decoder", "sections", "all"}))
      ->capture_default_str();
  on_run(biases, [options] { analysis::run_bias_analysis(*options); });
}

}  // namespace strata::cli
