#pragma once
// How busy the rest of the machine is while a benchmark runs, so that rounds disturbed by
// other processes can be set aside, and this process's own CPU time.
#include <chrono>
#include <string>

namespace strata::bench {

using Clock = std::chrono::steady_clock;

// The machine's busy time (/proc/stat) and this process's CPU time (getrusage), in seconds,
// at one moment.
struct CpuSample {
  double machine_busy = 0, self = 0;
  Clock::time_point when;
};

CpuSample cpu_sample();

// Other processes' CPU use between two samples, in cores: the machine's busy time minus this
// process's, over the wall-clock interval.
double other_cores(const CpuSample& a, const CpuSample& b);

// Other processes' CPU use over the next `seconds`, in cores.
double idle_probe(double seconds);

// This process's CPU time (user + system, every thread), in ms. On a machine shared with
// other jobs it is steadier than the wall clock: the work a step takes, not how long it waited.
double process_cpu_ms();

// /proc/loadavg's 1, 5 and 15 minute averages, as "0.52 0.40 0.31".
std::string load_average();

}  // namespace strata::bench
