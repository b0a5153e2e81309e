// strata bench patterns: its flags; the benchmark is strata/bench/patterns_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/flags.h"
#include "strata/bench/patterns_suite.h"

namespace strata::cli {

void register_bench_patterns(CLI::App& bench) {
  CLI::App* patterns = bench.add_subcommand(
      "patterns",
      "Time a 6-layer encoder (d_model 256, 8 heads, d_ff 4 x d_model, batch 1, fp32, forward + "
      "backward) on a 2,048-token man-page-like document: vanilla attention (recipe extractive) against "
      "4 of 8 (extractive-patterns) and 8 of 8 heads patterned (extractive-patterns-all; seed 003 §4.3: "
      "matching_token, intra_sentence, previous_token, next_token); target: vanilla / 8-of-8 >= 2. Each "
      "case in a child process of its own, median of several rounds; matching_token heads run in token "
      "order, as the fused kernel runs them. With each case's sparsity rho, its attention alone against "
      "the rest of the layer, the tiles its block masks visit per head group, and the attention of each "
      "pattern alone, so a missed target says where the time goes.");
  auto options = std::make_shared<bench::PatternsBenchOptions>();
  bench::add_run_flags(*patterns, options->run,
                       {"small and short: L = 256, 2 layers, d_model 64, 1 round (a smoke test)",
                        "timed rounds a case (default 5; 1 with --quick)"});
  patterns->add_option("--length", options->length, "tokens L (default 2048; 256 with --quick)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 20));
  patterns->add_option("--layers", options->layers, "encoder layers (default 6; 2 with --quick)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--heads", options->heads, "attention heads (default 8)")->check(CLI::PositiveNumber);
  patterns->add_option("--d-model", options->d_model, "model width (default 256; 64 with --quick)")
      ->check(CLI::PositiveNumber);
  patterns->add_option("--patterned", options->patterned,
                       "heads patterned in the last case (default: every head; at least 4)")
      ->check(CLI::PositiveNumber);
  on_run(patterns, [options] { bench::run_patterns_bench(*options); });
}

}  // namespace strata::cli
