// strata analyze heads: which attention heads a trained model's task depends on (seed 003
// §3.1.1, §4.2.1), as a table, heatmap and JSON.
#include <memory>

#include "commands.h"
#include "strata/analysis/head_analysis.h"

namespace strata::cli {

void register_analyze_heads(CLI::App& analyze) {
  CLI::App* heads = analyze.add_subcommand(
      "heads",
      "Estimate how much a trained model's task depends on each attention head (seed 003 §3.1.1): "
      "the gradient of the validation loss, per head of every attention module, by the first-order "
      "Taylor expansion (|Σ gradient × parameter| over the head's q/k/v rows and out_proj columns; "
      "Molchanov et al. 2019) or through a head mask (|∂loss/∂gate|, Michel et al. 2019). Writes "
      "OUT/importance.json (layers, scores[layer][head], heads from 0), importance.svg and "
      "importance.png (layers × heads, the first layer on top, heads from 1) and prints the table.");
  auto options = std::make_shared<analysis::HeadAnalysisOptions>();
  heads->add_option("--model", options->model, "a run directory or checkpoint of `strata train`")->required();
  heads->add_option("--data", options->data, "validation data (JSONL, as the model was trained on)")->required();
  heads->add_option("--out", options->out, "output directory (default: MODEL/heads)");
  heads->add_option("--method", options->method, "taylor or head_mask")
      ->check(CLI::IsMember({"taylor", "head_mask"}))
      ->capture_default_str();
  heads->add_option("--normalize", options->normalize, "layer (each layer's scores divided by their L2 norm) or none")
      ->check(CLI::IsMember({"layer", "none"}))
      ->capture_default_str();
  heads->add_option("--max-examples", options->max_examples, "the first N validation examples (0: all)")
      ->capture_default_str();
  heads->add_option("--max-tokens", options->max_tokens, "tokens per batch (rows × longest)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  heads->add_flag("--quiet", options->quiet, "no progress output");
  on_run(heads, [options] { analysis::run_head_analysis(*options); });
}

}  // namespace strata::cli
