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
      "attention, dense (L <= 8192; target: a/b >= 1.5); b) fused, dense; c) fused with a window "
      "hiding ~50 % of the pairs and d) same_section over 7 equal sections (targets: time / b <= "
      "1.1 (1 - rho), rho = the exact hidden fraction); e) c plus a learned HIBRIDS bias "
      "(target: e/c <= 1.3); f) at::mm's sgemm GFLOP/s and the fused dense kernel's (target: b/f "
      ">= 0.8); g) b with its tile products in BLAS sgemm. With --peer, PyTorch 2.6 in its own "
      "root (bench/peers/setup): p) scaled_dot_product_attention, dense (target: p/b >= 1.25) and "
      "q) with c's window as a boolean mask (target: c beats p by p/c >= 2). One line a case: "
      "ms, ratio, target, rho, peak memory.");
  auto options = std::make_shared<bench::AttentionBenchOptions>();
  bench::add_run_flags(*attention, options->run,
                       {"small and short: L = 1024, 3 rounds (a smoke test)",
                        "timed rounds a case (default 7; 3 with --quick)"});
  attention->add_option("--length", options->length, "sequence length L (default 4096; 1024 with --quick)")
      ->check(CLI::PositiveNumber);
  attention->add_option("--peer", options->peer,
                        "the peer runner, bench/peers/run: adds PyTorch 2.6's SDPA with the same threads, its "
                        "rounds interleaved with b's and c's (needs its root and root privileges)");
  on_run(attention, [options] { bench::run_attention_bench(*options); });
}

}  // namespace strata::cli
