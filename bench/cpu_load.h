#pragma once
// How busy the rest of the machine is while a benchmark runs, so that rounds disturbed by
// other processes can be set aside (bench_training, bench_decoding).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace strata::bench {

using Clock = std::chrono::steady_clock;

// CPU use of other processes, in cores, between two samples: the machine's busy time from
// /proc/stat minus this process's own CPU time (getrusage), over the wall-clock interval.
struct CpuSample {
  double machine_busy = 0, self = 0;
  Clock::time_point when;
};

inline CpuSample cpu_sample() {
  CpuSample s;
  s.when = Clock::now();
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  s.machine_busy = (user + nice + system + irq + softirq + steal) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  s.self = self.ru_utime.tv_sec + self.ru_utime.tv_usec * 1e-6 + self.ru_stime.tv_sec + self.ru_stime.tv_usec * 1e-6;
  return s;
}

inline double other_cores(const CpuSample& a, const CpuSample& b) {
  const double wall = std::chrono::duration<double>(b.when - a.when).count();
  if (wall <= 0) return 0;
  return std::max(0.0, (b.machine_busy - a.machine_busy) - (b.self - a.self)) / wall;
}

// Other processes' CPU use over the next `seconds`, in cores.
inline double idle_probe(double seconds) {
  const CpuSample a = cpu_sample();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return other_cores(a, cpu_sample());
}

}  // namespace strata::bench
