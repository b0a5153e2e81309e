// strata bench attention: its flags; the benchmark is strata/bench/attention_suite.h.
#include <memory>

#include "commands.h"
#include "strata/bench/attention_suite.h"
#include "strata/bench/flags.h"

namespace strata::cli {

void register_bench_attention(CLI::App& bench) {
  CLI::App* attention = bench.add_subcommand(
      "attention",
      "Time the fused attention kernel (batch 1, 8 heads, head dim 64, fp32, forward + "
      "backward) against its peers, each case in a child process of its own, median of "
      "several rounds, rounds disturbed by other processes set aside: a) libtorch composite "
      "attention, dense; b) fused, dense (target: a/b >= 1.5); c) fused with a window hiding "
      "~50 % of the pairs and d) same_section over 7 equal sections (targets: time / b <= "
      "1.25 (1 - rho), rho = the exact hidden fraction); e) c plus a learned HIBRIDS bias "
      "(target: e/c <= 1.3); f) at::mm's sgemm GFLOP/s and the fused dense kernel's. One line "
      "a case: ms, ratio, target, rho, peak memory.");
  auto options = std::make_shared<bench::AttentionBenchOptions>();
  bench::add_run_flags(*attention, options->run,
                       {"small and short: L = 1024, 3 rounds (a smoke test)",
                        "timed rounds a case (default 7; 3 with --quick)"});
  attention->add_option("--length", options->length, "sequence length L (default 4096; 1024 with --quick)")
      ->check(CLI::PositiveNumber);
  on_run(attention, [options] { bench::run_attention_bench(*options); });
}

}  // namespace strata::cli
