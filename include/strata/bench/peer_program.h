#pragma once
// A peer measured outside this process, in lockstep with this one: bench/peers/run runs one of
// bench/peers/'s Python scripts (PyTorch 2.6 in its own Debian 13 root) under the same
// OMP_NUM_THREADS and OPENBLAS_CORETYPE, with --lockstep. The script builds its model, warms
// up and prints a JSON line; then it runs one round for each "round N" line it reads and
// answers with a JSON line {"ms", "cpu_ms", ...}; "end" (or the end of its stdin) makes it
// print its summary and exit. Other lines on its stdout are passed over. The benchmark calls
// it from its own round loop (timing.h: interleave), so the peer's rounds and strata's
// alternate, and a host whose speed drifts weighs on both alike.
#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::bench {

class PeerProcess {
 public:
  // Starts `runner script args... --lockstep` with OMP_NUM_THREADS = threads and waits for its
  // first JSON line. Nullptr, with the reason printed, when the peer cannot run here (no root:
  // runner exit 3; not root) or fails before that line; the benchmark then goes on without it.
  static std::unique_ptr<PeerProcess> start(const std::string& runner, const std::string& script,
                                            std::vector<std::string> args, int threads);
  ~PeerProcess();
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  // The first line: the peer's settings (torch's version, BLAS, malloc, parameters, ...).
  const nlohmann::ordered_json& ready() const { return ready_; }
  // One round: the peer's own wall-clock and process CPU time for it ("ms", "cpu_ms") and
  // whatever else the script reports. Nullopt, with the reason printed, when the peer died or
  // answered something else; the process is then stopped.
  std::optional<nlohmann::ordered_json> round(int index);
  // The CPU time of every round answered so far, in ms: what a round loop subtracts from
  // "other processes" (the peer is one, but it is measured, not a neighbour).
  double rounds_cpu_ms() const { return rounds_cpu_ms_; }
  // Asks for the summary ("end"), waits for the process and returns its last JSON line.
  std::optional<nlohmann::ordered_json> finish();

 private:
  PeerProcess(std::string what, pid_t pid, std::FILE* to, std::FILE* from);
  // The next stdout line that is a JSON object (other lines are passed over); nullopt at the
  // end of its output.
  std::optional<nlohmann::ordered_json> next_json();
  // Closes the pipes (its stdin's end stops the round loop), waits for the process and says
  // whether it exited 0, printing why not (exit 3: no root) when it did not.
  bool stop();

  std::string what_;  // "bench/peers/run transformer.py", for messages
  pid_t pid_ = -1;
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  nlohmann::ordered_json ready_;
  double rounds_cpu_ms_ = 0;
};

}  // namespace strata::bench
