// strata bench linear: its flags; the benchmark is strata/bench/linear_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/flags.h"
#include "strata/bench/linear_suite.h"

namespace strata::cli {

void register_bench_linear(CLI::App& bench) {
  CLI::App* linear = bench.add_subcommand(
      "linear",
      "Time strata's linear product (an AVX-512 micro-kernel where the CPU has it) against libtorch's "
      "(torch::linear on BLAS), forward + backward, on the linear layers of bench_training's model "
      "(d_model 256, d_ff 1024, vocabulary 8000), both in this process, round by round in rotating order. "
      "One line a layer: milliseconds each, libtorch/strata (paired median; > 1: strata faster), GFLOP/s.");
  auto options = std::make_shared<bench::LinearBenchOptions>();
  bench::add_run_flags(*linear, options->run,
                       {"512 rows, 2 rounds (a smoke test)", "timed rounds (default 9; 2 with --quick)"});
  linear->add_option("--rows", options->rows, "rows of each product: batch x tokens (default 4096; 512 with --quick)")
      ->check(CLI::Range(std::int64_t{16}, std::int64_t{1} << 22));
  on_run(linear, [options] { bench::run_linear_bench(*options); });
}

}  // namespace strata::cli
