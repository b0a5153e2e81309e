#include "strata/bench/timing.h"

#include <algorithm>
#include <chrono>

#include "strata/bench/cpu_load.h"

namespace strata::bench {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::vector<double> Interleaved::kept_of(const std::vector<double>& per_round) const {
  std::vector<double> out;
  for (std::size_t r = 0; r < per_round.size(); ++r)
    if (kept(r)) out.push_back(per_round[r]);
  return out;
}

std::vector<double> Interleaved::ratios(std::size_t step, std::size_t reference) const {
  std::vector<double> out;
  for (std::size_t r = 0; r < others.size(); ++r)
    if (kept(r)) out.push_back(ms[step][r] / ms[reference][r]);
  return out;
}

double Interleaved::paired_cpu_ratio(std::size_t step, std::size_t reference) const {
  std::vector<double> out;
  for (std::size_t r = 0; r < others.size(); ++r)
    if (kept(r)) out.push_back(cpu_ms[step][r] / cpu_ms[reference][r]);
  return median_of(out);
}

Interleaved interleave(const std::vector<std::function<void(int round)>>& steps, int rounds, double busy_cores,
                       const std::function<double()>& measured_cpu_ms) {
  const std::size_t n = steps.size();
  Interleaved t;
  t.ms.resize(n);
  t.cpu_ms.resize(n);
  int clean_rounds = 0;
  for (int round = 0; clean_rounds < rounds && round < 2 * rounds; ++round) {
    const CpuSample round_start = cpu_sample();
    const double measured_start = measured_cpu_ms ? measured_cpu_ms() : 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(round)) % n;
      const double cpu_start = process_cpu_ms();
      const auto start = Clock::now();
      steps[k](round);
      t.ms[k].push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      t.cpu_ms[k].push_back(process_cpu_ms() - cpu_start);
    }
    const CpuSample round_end = cpu_sample();
    double others = other_cores(round_start, round_end);
    if (measured_cpu_ms) {
      const double seconds = std::chrono::duration<double>(round_end.when - round_start.when).count();
      others = std::max(0.0, others - (measured_cpu_ms() - measured_start) / 1e3 / seconds);
    }
    t.others.push_back(others);
    t.clean.push_back(t.others.back() <= busy_cores);
    clean_rounds += t.clean.back();
  }
  t.busy_rounds_included = clean_rounds * 2 < rounds;
  return t;
}

nlohmann::ordered_json TimedRounds::to_json() const {
  return {{"median_ms", median_ms},
          {"round_ms", ms},
          {"other_processes_cores", others},
          {"round_clean", clean},
          {"busy_rounds_included", busy_rounds_included}};
}

TimedRounds Interleaved::of_step(std::size_t step) const {
  TimedRounds t{ms[step], others, clean, busy_rounds_included, median_ms(step), 0};
  for (double cpu : cpu_ms[step]) t.cpu_ms_per_round += cpu / static_cast<double>(cpu_ms[step].size());
  return t;
}

TimedRounds time_rounds(const std::function<void()>& step, int rounds, double busy_cores) {
  return interleave({[&step](int) { step(); }}, rounds, busy_cores).of_step(0);
}

}  // namespace strata::bench
