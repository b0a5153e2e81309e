#pragma once
// `strata bench ddp`: what data-parallel training buys on this machine. A seq2seq model
// (d_model 256, 3 + 3 layers, ~7M parameters) trains on generated documents as `strata train`
// runs it, as 1 process × T threads against T processes × 1 thread (`--nproc T`), the cases
// alternating over the rounds. Per case: training tokens/s (the median over the logged windows
// after the first, then over rounds) and its ratio to the one process; for the data-parallel
// case, the share of rank 0's step spent blocked on its peers and the bytes each rank
// all-reduces a step. The inputs of the multi-machine arithmetic in docs/data-parallel.md.
#include <string>

#include "strata/bench/run_options.h"

namespace strata::bench {

struct DdpBenchOptions {
  RunOptions run;        // threads: the cores to use (default every core); rounds (default 3)
  int steps = 0;         // training steps a run (default 40; 10 with --quick)
  std::string work_dir;  // where the data, tokenizer and runs go (default a fresh temporary dir)
};

void run_ddp_bench(const DdpBenchOptions& options);

}  // namespace strata::bench
