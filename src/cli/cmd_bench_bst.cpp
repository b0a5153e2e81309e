// strata bench bst and bst-long: their flags; the benchmarks are strata/bench/bst_suite.h and
// strata/bench/bst_long_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/bst_long_suite.h"
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

void register_bench_bst_long(CLI::App& bench) {
  CLI::App* sub = bench.add_subcommand(
      "bst-long",
      "Train one step of a Block-State Transformer layer stack at a million tokens (thesis ch. 5's long-context "
      "claim) on this CPU: forward + backward with a fixed random output gradient, batch 1, fp32, BST:SH with an "
      "S4D SSM at the odd layers and SLIDE elsewhere, beside a stack of SLIDE layers alone measured in the same "
      "run. The SSM runs over the whole sequence by FFT; attention and feed-forward run span by span, each "
      "span's graph made again in backward, so memory grows as L x D, not with the graph. One line a stack: "
      "seconds, tokens/s, ratio to SLIDE, peak memory of its child process and whether it stays under 2 GB.");
  auto options = std::make_shared<bench::BstLongBenchOptions>();
  bench::add_run_flags(*sub, options->run,
                       {"65,536 tokens, 1 round (a smoke test)", "timed rounds a stack (default 2; 1 with --quick)"});
  sub->add_option("--length", options->length, "tokens (default 1048576; 65536 with --quick)")
      ->check(CLI::Range(std::int64_t{256}, std::int64_t{1} << 24));
  sub->add_option("--d-model", options->d_model, "model width, heads of 16 (default 64)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{4096}));
  sub->add_option("--layers", options->layers, "layers; BST at the odd ones (default 2)")->check(CLI::Range(1, 64));
  sub->add_option("--window", options->window, "W, the tokens of a block (default 128)")->check(CLI::PositiveNumber);
  sub->add_option("--span", options->span, "tokens recomputed at once, a multiple of W (default 8192)")
      ->check(CLI::PositiveNumber);
  on_run(sub, [options] { bench::run_bst_long_bench(*options); });
}

}  // namespace strata::cli
