// strata bench long: its flags; the benchmark is strata/bench/long_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/flags.h"
#include "strata/bench/long_suite.h"

namespace strata::cli {

void register_bench_long(CLI::App& bench) {
  CLI::App* long_bench = bench.add_subcommand(
      "long",
      "Time one structured attention layer at a million tokens (batch 1, 8 heads, head dim 64, "
      "fp32, forward + backward through the fused kernel): a) window(W,W) | global(G); b) "
      "same_section over the section sizes of the installed man pages, a word a token, both "
      "attention alone on whole tensors (8 x L x 512 floats: 16 GiB at L = 2^20; the machine "
      "needs about 20 GB free); c), d) the same structures, the whole layer (embedding, q/k/v "
      "projections, attention, output projection) streamed chunk by chunk, exactly, in under 2 GB. "
      "Each case in a child process of its own; prints seconds, tokens/s and peak memory.");
  auto options = std::make_shared<bench::LongBenchOptions>();
  bench::add_run_flags(*long_bench, options->run,
                       {"small and short: L = 65,536, 1 round (a smoke test)",
                        "timed rounds a case (default 2; 1 with --quick)"});
  long_bench->add_option("--length", options->length, "tokens L (default 1,048,576; 65,536 with --quick)")
      ->check(CLI::Range(std::int64_t{1024}, std::int64_t{1} << 24));
  long_bench->add_option("--window", options->window, "W of case a) (default 256)")->check(CLI::NonNegativeNumber);
  long_bench->add_option("--global", options->global, "G of case a) (default 16)")->check(CLI::NonNegativeNumber);
  long_bench->add_option("--man-dir", options->man_dir,
                         "the man pages whose section sizes cases b) and d) use (default /usr/share/man/man1)");
  long_bench->add_option("--chunk", options->chunk, "queries a chunk in cases c) and d) (default 16,384)")
      ->check(CLI::Range(std::int64_t{64}, std::int64_t{1} << 24));
  long_bench->add_option("--cases", options->cases, "the cases to run, by letter or name (default: a b c d)")
      ->delimiter(',');
  on_run(long_bench, [options] { bench::run_long_bench(*options); });
}

}  // namespace strata::cli
