// strata analyze agreement: how much models trained apart (say, with other seeds) agree on
// where their encoder self-attention looks (seed 003 §3.1.2's JSD across seeds).
#include <memory>

#include "commands.h"
#include "strata/analysis/attention_agreement.h"

namespace strata::cli {

void register_analyze_agreement(CLI::App& analyze) {
  CLI::App* agreement = analyze.add_subcommand(
      "agreement",
      "Compare the encoder self-attention of two or more models of one task (seed 003 §3.1.2, which reports a "
      "Jensen-Shannon divergence of 0.01 across 3 seeds): per pair of models and per head, the mean over "
      "validation examples and their real queries of the JSD between the two models' attention rows, in nats "
      "(0 = the same, at most ln 2). Writes OUT/agreement.json (per pair: mean and matrix[layer][head], heads "
      "from 0; the mean over pairs) and prints a table per pair.");
  auto options = std::make_shared<analysis::AgreementOptions>();
  agreement
      ->add_option("--model", options->models,
                   "a run directory or checkpoint of `strata train` (seq2seq or encoder); give two or more")
      ->required();
  agreement->add_option("--data", options->data, "validation data (JSONL, as the models were trained on)")->required();
  agreement->add_option("--out", options->out, "output directory (default: FIRST_MODEL/agreement)");
  agreement->add_option("--max-examples", options->max_examples, "the first N validation examples (0: all)")
      ->capture_default_str();
  agreement->add_option("--max-tokens", options->max_tokens, "tokens per batch (rows × longest)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  agreement->add_flag("--quiet", options->quiet, "no progress output");
  on_run(agreement, [options] { analysis::run_agreement_analysis(*options); });
}

}  // namespace strata::cli
