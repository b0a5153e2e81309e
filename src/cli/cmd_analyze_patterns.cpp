// strata analyze patterns: how much of each encoder self-attention head's weight follows an
// interpretable pattern (seed 003 §3.1.3 Eq. 1, §4.2.2), as JSON, heatmaps and a summary.
#include <memory>

#include "commands.h"
#include "strata/analysis/pattern_analysis.h"

namespace strata::cli {

void register_analyze_patterns(CLI::App& analyze) {
  CLI::App* patterns = analyze.add_subcommand(
      "patterns",
      "Measure how much of each encoder self-attention head's weight follows interpretable patterns "
      "(seed 003 §3.1.3): the global relevance GR(P, h), the mean over validation examples of the "
      "weight on pairs (i, j) where P holds, per query. A pattern is kept when some head lies more than "
      "3 standard deviations above the mean over all heads (§4.2.2; possible only with 11 heads or more). "
      "Built-in patterns: matching_token, intra_sentence, intra_context, previous_token, next_token, "
      "special_token, punctuation; --definitions composes them with & | ! and parentheses. Writes "
      "OUT/relevance.json (per pattern: matrix[layer][head], mean, std, threshold, kept, top heads; heads "
      "from 0), PATTERN.svg and PATTERN.png (layers × heads, the first layer on top, heads from 1) and "
      "prints a summary.");
  auto options = std::make_shared<analysis::PatternAnalysisOptions>();
  patterns
      ->add_option("--model", options->model, "a run directory or checkpoint of `strata train` (seq2seq or encoder)")
      ->required();
  patterns->add_option("--data", options->data, "validation data (JSONL, as the model was trained on)")->required();
  patterns->add_option("--out", options->out, "output directory (default: MODEL/patterns)");
  patterns->add_option("--patterns", options->patterns, "comma-separated pattern names")->capture_default_str();
  patterns->add_option("--definitions", options->definitions,
                       "pattern definitions: a JSON object {\"name\": \"expression\"} or a file holding one, "
                       "e.g. '{\"local\": \"previous_token | next_token\"}'");
  patterns->add_option("--top", options->top, "heads listed per pattern")->capture_default_str();
  patterns->add_option("--max-examples", options->max_examples, "the first N validation examples (0: all)")
      ->capture_default_str();
  patterns->add_option("--max-tokens", options->max_tokens, "tokens per batch (rows × longest)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  patterns->add_flag("--quiet", options->quiet, "no progress output");
  on_run(patterns, [options] { analysis::run_pattern_analysis(*options); });
}

}  // namespace strata::cli
