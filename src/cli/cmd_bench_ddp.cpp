// strata bench ddp: its flags; the benchmark is strata/bench/ddp_suite.h.
#include <memory>

#include "commands.h"
#include "strata/bench/ddp_suite.h"
#include "strata/bench/flags.h"

namespace strata::cli {

void register_bench_ddp(CLI::App& bench) {
  CLI::App* ddp = bench.add_subcommand(
      "ddp",
      "Time data-parallel training on this machine: a seq2seq model (d_model 256, 3+3 layers) trained by "
      "`strata train` on generated documents as 1 process x 1 thread, 1 process x T threads and T processes x 1 "
      "thread (--nproc T), T = --threads, the cases alternating over the rounds. Prints tokens/s (median of the "
      "logged windows after the first, then of the rounds), the ratio to 1 x T, the share of rank 0's step spent "
      "waiting on its peers, and the MB each rank all-reduces a step.");
  auto options = std::make_shared<bench::DdpBenchOptions>();
  bench::add_run_flags(*ddp, options->run,
                       {"short: 10 steps a run, 1 round (a smoke test)", "rounds of every case (default 3; 1 with --quick)",
                        true});
  ddp->add_option("--steps", options->steps, "training steps a run (default 40; 10 with --quick)")
      ->check(CLI::PositiveNumber);
  ddp->add_option("--work-dir", options->work_dir, "where the data, tokenizer and runs go (default: a new temporary directory)");
  on_run(ddp, [options] { bench::run_ddp_bench(*options); });
}

}  // namespace strata::cli
