#pragma once
// What the `strata bench ...` commands share. Every case runs in a child process of its own
// (this binary re-executed as `strata bench NAME --child CASE --child-out FILE ...`, spawned
// before the parent starts any thread pool), so the child's ru_maxrss is that case's peak
// memory; the child times rounds, setting aside those during which other processes used the
// CPU (bench/cpu_load.h), and writes its result as JSON for the parent.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::cli {

// kB from a "Name:   1234 kB" line of /proc/self/status ("VmRSS", "VmHWM"); -1 if absent.
long status_kb(const std::string& field);

double median_of(std::vector<double> values);

// Timed calls of a step. A round during which other processes used more than `busy_cores`
// is set aside and run again, at most `rounds` extra times: with as many threads as cores, a
// busy neighbour stalls every parallel region. The median is over the clean rounds, or over
// every round when fewer than half were clean.
struct TimedRounds {
  std::vector<double> ms;      // every round, in order
  std::vector<double> others;  // other processes' CPU use during each round, in cores
  std::vector<bool> clean;     // others <= busy_cores
  bool busy_rounds_included = false;
  double median_ms = 0;

  // {"median_ms", "round_ms", "other_processes_cores", "round_clean", "busy_rounds_included"}
  nlohmann::ordered_json to_json() const;
};
TimedRounds time_rounds(const std::function<void()>& step, int rounds, double busy_cores);

// Runs `strata bench <bench> --child <case_name> --child-out TMP <args...>` and waits for it.
// Returns the JSON the child wrote to TMP and the child's ru_maxrss (the whole process,
// libtorch included); strata::Error naming the case when the child fails.
struct ChildResult {
  nlohmann::ordered_json result;
  double maxrss_mb = 0;
};
ChildResult run_case_in_child(const std::string& bench, const std::string& case_name,
                              const std::vector<std::string>& args);

}  // namespace strata::cli
