#pragma once
// RunOptions' flags on a CLI11 app, the same for every `strata bench` command and every
// program of bench/. Header-only: CLI11 is linked by those programs, not by strata_tensor.
#include <string>

#include <CLI/CLI.hpp>

#include "strata/bench/run_options.h"

namespace strata::bench {

// What a benchmark says of its defaults; an empty `quick` or `rounds` leaves that flag out.
struct FlagHelp {
  std::string quick;   // e.g. "small and short: L = 1024, 3 rounds (a smoke test)"
  std::string rounds;  // e.g. "timed rounds a case (default 7; 3 with --quick)"
  bool quiet = false;  // offer --quiet
};

inline void add_run_flags(CLI::App& app, RunOptions& options, const FlagHelp& help) {
  if (!help.quick.empty()) app.add_flag("--quick", options.quick, help.quick);
  if (help.quiet) app.add_flag("--quiet", options.quiet, "no progress output");
  app.add_option("--json", options.json, "also write the results to this JSON file");
  app.add_option("--threads", options.threads, "threads (default: every core)")->check(CLI::PositiveNumber);
  if (!help.rounds.empty()) app.add_option("--rounds", options.rounds, help.rounds)->check(CLI::PositiveNumber);
  app.add_option("--child", options.child)->group("");
  app.add_option("--child-out", options.child_out)->group("");
}

}  // namespace strata::bench
