#pragma once
// The options every benchmark takes, whatever else it measures.
#include <string>
#include <vector>

namespace strata::bench {

struct RunOptions {
  bool quick = false;     // small and short: a smoke test
  bool quiet = false;     // no progress on stderr
  std::string json;       // also write the results to this file
  int threads = 0;        // 0 until resolved: every core
  int rounds = 0;         // timed rounds a case; 0 until resolved
  std::string child;      // hidden: the case this process runs
  std::string child_out;  // hidden: where it writes its result

  bool is_child() const { return !child.empty(); }
  // Fills threads (every core) and rounds (`rounds`, or `quick_rounds` with --quick) when unset.
  void resolve(int rounds, int quick_rounds);
  // What a case's child is re-run with: --threads, --rounds, and --quick when set.
  std::vector<std::string> child_args() const;
};

// $STRATA_BENCH_JSON_DIR/NAME.json, else NAME.json in the working directory: where the
// programs of bench/ write their results by default.
std::string default_json_path(const std::string& name);

}  // namespace strata::bench
