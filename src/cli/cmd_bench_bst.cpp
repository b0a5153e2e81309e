// strata bench bst: its flags; the benchmark is strata/bench/bst_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/bst_suite.h"
#include "strata/bench/flags.h"

namespace strata::cli {

void register_bench_bst(CLI::App& bench) {
  CLI::App* bst = bench.add_subcommand(
      "bst",
      "Time one Block-State Transformer layer (thesis ch. 5, Fig. 5.4 left) against the SLIDE layer it extends: "
      "d_model 256, 8 heads, d_ff 1024, batch 1, fp32, forward only, blocks of W tokens; BST:SH, BST:MH and "
      "BST:MF with an S4D (or unstructured) SSM of width D/4 and N = 16 states, and the Block-Recurrent layer "
      "(BRecT: W state vectors updated block after block), at 1k, 4k, 16k and 64k tokens. "
      "Each (layer, length) in a child process of its own, median of several rounds, rounds disturbed by other "
      "processes set aside. One line each: ms, ratio to SLIDE at that length, GFLOP counted analytically and its "
      "ratio, GFLOP/s, peak memory.");
  auto options = std::make_shared<bench::BstBenchOptions>();
  bench::add_run_flags(*bst, options->run,
                       {"small and short: 1k and 4k tokens, 2 rounds (a smoke test)",
                        "timed rounds a case (default 5; 2 with --quick)"});
  bst->add_option("--lengths", options->lengths, "sequence lengths, comma-separated (default 1024,4096,16384,65536)")
      ->delimiter(',')
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 22));
  bst->add_option("--window", options->window, "W, the tokens of a block (default 128)")->check(CLI::PositiveNumber);
  bst->add_option("--kernel", options->kernel, "the SSM kernel: s4d or unstructured (default s4d)")
      ->check(CLI::IsMember({"s4d", "unstructured"}));
  on_run(bst, [options] { bench::run_bst_bench(*options); });
}

}  // namespace strata::cli
