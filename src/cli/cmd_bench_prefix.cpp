// strata bench prefix: its flags; the benchmark is strata/bench/prefix_suite.h.
#include <cstdint>
#include <memory>

#include "commands.h"
#include "strata/bench/flags.h"
#include "strata/bench/prefix_suite.h"

namespace strata::cli {

void register_bench_prefix(CLI::App& bench) {
  CLI::App* prefix = bench.add_subcommand(
      "prefix",
      "Time the structured prefix designs of seed 000 (§4.1-4.2) in an encoder (6 layers, d_model 256, 8 "
      "heads, d_ff 1024, batch 1, fp32, fused kernel) at 1024 input tokens with P = 100 prefixes a layer: "
      "prefix-tuning's step, backbone frozen, forward + backward down to the prefix keys and values. Cases, "
      "each a recipe at these sizes: no prefix (finetune), Prefix-tune (prefix: dense prefixes), UniBlock "
      "(prefix_block on every layer), HierBlock (prefix_block on the lower half, dense above; inputs in K "
      "segments, prefixes in K groups), TruncSA (top-p 0.95 over the key impact), SoftSA (Gumbel softmax, "
      "tau 1), HierBlock+SoftSA. Each case in a child process of its own, median of several rounds, and all "
      "of them again interleaved in one process (paired ratios: the steadiest on a shared machine); one line "
      "a case: ms and its ratio to Prefix-tune in the same run, the paired ratio, the attention alone and its "
      "ratio, the fraction of (query, key) pairs visible (every key, and the prefix slots alone), peak memory; "
      "then each kind of layer's attention and the tiles its block mask visits.");
  auto options = std::make_shared<bench::PrefixBenchOptions>();
  bench::FlagHelp help;
  help.rounds = "timed rounds a case (default 5)";
  help.quiet = true;
  bench::add_run_flags(*prefix, options->run, help);
  prefix->add_option("--length", options->length, "input tokens L (default 1024)")
      ->check(CLI::Range(std::int64_t{4}, std::int64_t{1} << 20));
  prefix->add_option("--prefixes", options->prefixes, "prefix slots P a layer (default 100)")->check(CLI::PositiveNumber);
  prefix->add_option("--blocks", options->blocks, "K: input segments and prefix groups of UniBlock / HierBlock (default 3)")
      ->check(CLI::PositiveNumber);
  prefix->add_option("--layers", options->layers, "encoder layers (default 6; the lower half, rounded up, is blocked)")
      ->check(CLI::PositiveNumber);
  prefix->add_option("--d-model", options->d_model, "model width (default 256)")->check(CLI::PositiveNumber);
  prefix->add_option("--heads", options->heads, "attention heads (default 8)")->check(CLI::PositiveNumber);
  prefix->add_option("--d-ff", options->d_ff, "feed-forward width (default 1024)")->check(CLI::PositiveNumber);
  prefix->add_option("--top-p", options->top_p, "TruncSA's p (default 0.95)");
  prefix->add_option("--tau", options->tau, "SoftSA's Gumbel temperature (default 1)");
  on_run(prefix, [options] { bench::run_prefix_bench(*options); });
}

}  // namespace strata::cli
