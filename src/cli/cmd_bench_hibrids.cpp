// strata bench hibrids: its flags; the benchmark is strata/bench/hibrids_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/flags.h"
#include "strata/bench/hibrids_suite.h"

namespace strata::cli {

void register_bench_hibrids(CLI::App& bench) {
  CLI::App* hibrids = bench.add_subcommand(
      "hibrids",
      "Time a long-document encoder (2 layers, d_model 256, 4 heads, d_ff 1024, batch 1, fp32, "
      "forward + backward) on a synthetic document of 60 sections up to depth 4, every layer "
      "window(W,W) | global(1): without a bias (base, recipe longformer), with the HIBRIDS bias "
      "(hibrids-enc; target: hibrids/base <= 1.3) and with HIBRIDS_S (hibrids-s-enc); each case in "
      "a child process of its own, median of several rounds, rounds disturbed by other processes "
      "set aside. One line a case: ms, ratio, target, table size, peak memory; then the layout's "
      "memory (O(S^2 + L)) against an L x L index.");
  auto options = std::make_shared<bench::HibridsBenchOptions>();
  bench::add_run_flags(*hibrids, options->run,
                       {"small and short: L = 2048, 1 round (a smoke test)",
                        "timed rounds a case (default 5; 1 with --quick)"});
  hibrids->add_option("--length", options->length, "tokens L (default 8192; 2048 with --quick)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 20));
  hibrids->add_option("--window", options->window, "half-width W of window(W,W) (default 256)")
      ->check(CLI::NonNegativeNumber);
  on_run(hibrids, [options] { bench::run_hibrids_bench(*options); });
}

}  // namespace strata::cli
