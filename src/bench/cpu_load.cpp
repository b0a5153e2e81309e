#include "strata/bench/cpu_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>

namespace strata::bench {

namespace {

double seconds_of(const struct timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); }

double self_seconds() {
  struct rusage self {};
  ::getrusage(RUSAGE_SELF, &self);
  return seconds_of(self.ru_utime) + seconds_of(self.ru_stime);
}

}  // namespace

CpuSample cpu_sample() {
  CpuSample s;
  s.when = Clock::now();
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  s.machine_busy = (user + nice + system + irq + softirq + steal) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  s.self = self_seconds();
  return s;
}

double other_cores(const CpuSample& a, const CpuSample& b) {
  const double wall = std::chrono::duration<double>(b.when - a.when).count();
  if (wall <= 0) return 0;
  return std::max(0.0, (b.machine_busy - a.machine_busy) - (b.self - a.self)) / wall;
}

double idle_probe(double seconds) {
  const CpuSample a = cpu_sample();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return other_cores(a, cpu_sample());
}

double process_cpu_ms() { return 1e3 * self_seconds(); }

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

}  // namespace strata::bench
