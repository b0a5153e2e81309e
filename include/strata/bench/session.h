#pragma once
// One benchmark run in the parent process: the machine's load before the start, every case in
// a child process of its own (child_process.h) with progress on stderr, each case's ratio to a
// reference case measured in the same run, the cases whose medians had to include busy rounds,
// and the one JSON result shape every benchmark writes:
//   {"benchmark", its settings..., "threads", "rounds", "quick", "other_processes_cores_before",
//    "busy_threshold_cores", its findings..., "cases": {name: {"label", the child's result
//    (median_ms, round_ms, ...), "ratio", "ratio_of", "target", "peak_rss_mb", ...}}}
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/bench/child_process.h"
#include "strata/bench/run_options.h"

namespace strata::bench {

// The bound a ratio should meet: op "<=" or ">=".
struct Target {
  std::string op;
  double bound = 0;
  bool met(double ratio) const { return op == "<=" ? ratio <= bound : ratio >= bound; }
  nlohmann::ordered_json to_json(double ratio) const { return {{"op", op}, {"bound", bound}, {"met", met(ratio)}}; }
};

class Session {
 public:
  // `benchmark`: the JSON's name for it; `command`: the words that re-run this program for a
  // case, e.g. {"strata", "bench", "hibrids"}. Probes other processes' CPU use for a second:
  // construct it before any thread pool starts.
  Session(std::string benchmark, std::vector<std::string> command, RunOptions options, double busy_cores);

  const RunOptions& options() const { return options_; }
  double others_before() const { return others_before_; }
  double busy_cores() const { return busy_cores_; }

  // "other processes' CPU use before the start: 0.05 cores", flagged when busy.
  void print_load() const;
  // Each case in a child of its own, in order; the children get `args` after --child-out.
  void measure(const std::vector<std::string>& cases, const std::vector<std::string>& args);
  const CaseMeasurement& operator[](const std::string& name) const;
  const nlohmann::ordered_json& result(const std::string& name) const { return (*this)[name].result; }
  double median_ms(const std::string& name) const;
  // The peer's ratio: case `name`'s median over case `reference`'s.
  double ratio(const std::string& name, const std::string& reference) const;

  // Notes `name` as noisy when `timing` (time_rounds' fields) had to include busy rounds.
  void check_noisy(const std::string& name, const nlohmann::ordered_json& timing);
  // "noisy: ... rerun on a quiet machine" when any case was.
  void print_noisy() const;

  // A case's entry in "cases": its label, the child's result, peak_rss_mb (the child's
  // ru_maxrss) and rss_growth_mb (what its steps added over its inputs).
  nlohmann::ordered_json case_json(const std::string& name, const std::string& label) const;
  // The result to options().json when it is set ("results: FILE" on stdout).
  void write_json(const nlohmann::ordered_json& settings, const nlohmann::ordered_json& findings,
                  nlohmann::ordered_json cases) const;

 private:
  std::string benchmark_;
  std::vector<std::string> command_;
  std::string name_;  // for progress and errors: "bench hibrids", "bench_training"
  RunOptions options_;
  double busy_cores_ = 0;
  double others_before_ = 0;
  std::map<std::string, CaseMeasurement> cases_;
  std::vector<std::string> noisy_;
};

}  // namespace strata::bench
