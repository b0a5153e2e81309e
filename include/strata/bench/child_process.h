#pragma once
// Every case of a benchmark runs in a child process of its own: the program re-executed with
// `--child CASE --child-out FILE` after the words that name the benchmark, spawned before the
// parent starts any thread pool, so that the child's ru_maxrss is that case's peak memory. The
// child writes its result as JSON to FILE; the parent reads it back.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/bench/peer_program.h"
#include "strata/bench/timing.h"

namespace strata::bench {

// kB from a "Name:   1234 kB" line of /proc/self/status ("VmRSS", "VmHWM"); -1 if absent.
long status_kb(const std::string& field);

// The start of every child that times libtorch: `threads` threads, a fixed seed, and the
// thread pools started by a first product, so that no case pays for them in its rounds.
void prepare_child(int threads);

// A child's memory marks, written into its result: VmRSS once its model and inputs are
// built, VmHWM (the peak) once its timed rounds are done.
class MemoryMarks {
 public:
  void inputs_built();
  void rounds_done();
  void add_to(nlohmann::ordered_json& result) const;  // "inputs_kb", "hwm_kb"

 private:
  long inputs_kb_ = -1, hwm_kb_ = -1;
};

// A child's timing of one step: memory marked once the inputs are built, `warmups` untimed
// steps, the timed rounds (time_rounds with kBusyCores), memory marked again.
TimedRounds time_child_step(const std::function<void()>& step, int rounds, MemoryMarks& marks, int warmups = 1);

// Several steps of this process timed round for round (a case and the case it is compared
// with), and with `peer` a peer in lockstep (peer_program.h) beside the first step, one peer
// round each round, in rounds of their own when there are several steps: memory marked,
// `warmups` untimed rounds of the local steps, the rounds, memory marked again. Returns the
// local steps' timings (a lone step's from its rounds beside the peer); `peer_timing` gets the
// peer's own times of its rounds ("median_ms" over the kept rounds, "rounds_ms",
// "round_clean") and its summary, or null when it stopped answering (the reason is printed).
Interleaved time_child_steps(const std::vector<std::function<void()>>& steps, PeerProcess* peer, int rounds,
                             MemoryMarks& marks, int warmups, nlohmann::ordered_json& peer_timing);

struct CaseMeasurement {
  nlohmann::ordered_json result;  // what the child wrote, its memory marks taken out
  double maxrss_mb = 0;           // the child's ru_maxrss: the whole process, libtorch included
  double hwm_mb = 0;              // VmHWM after the rounds (0 without memory marks)
  double growth_mb = 0;           // that minus VmRSS once the inputs were built: what the steps added
};

// Runs `COMMAND... --child CASE --child-out TMP ARGS...` (this program, /proc/self/exe) and
// waits for it. strata::Error naming the case when the child fails.
CaseMeasurement run_case_in_child(const std::vector<std::string>& command, const std::string& case_name,
                                  const std::vector<std::string>& args);

}  // namespace strata::bench
