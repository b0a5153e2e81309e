#pragma once
// Timed rounds. A round during which other processes used more than `busy_cores` of the CPU
// is set aside and run again, at most `rounds` extra times: with as many threads as cores, a
// busy neighbour stalls every parallel region. Medians are over the clean rounds, or over
// every round when fewer than half were clean.
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::bench {

// Other processes' CPU use, in cores, above which a round is set aside: every suite's.
inline constexpr double kBusyCores = 0.3;

double median_of(std::vector<double> values);

struct TimedRounds;

// Several steps timed round by round: each round runs every step once, in an order that
// rotates from round to round, so a neighbour's load falls on all of them alike. Step k is
// called with the round's index.
struct Interleaved {
  std::vector<std::vector<double>> ms, cpu_ms;  // [step][round]: wall clock and process CPU time
  std::vector<double> others;                   // other processes' CPU use during each round, in cores
  std::vector<bool> clean;                      // others <= busy_cores
  bool busy_rounds_included = false;

  bool kept(std::size_t round) const { return busy_rounds_included || clean[round]; }
  std::vector<double> kept_of(const std::vector<double>& per_round) const;
  double median_ms(std::size_t step) const { return median_of(kept_of(ms[step])); }
  double median_cpu_ms(std::size_t step) const { return median_of(kept_of(cpu_ms[step])); }
  // Step k's time over the reference step's, round by round (kept rounds), and their median:
  // the paired ratio, steadier than a ratio of medians on a shared machine.
  std::vector<double> ratios(std::size_t step, std::size_t reference) const;
  double paired_ratio(std::size_t step, std::size_t reference) const { return median_of(ratios(step, reference)); }
  double paired_cpu_ratio(std::size_t step, std::size_t reference) const;
  // One step's rounds on their own.
  TimedRounds of_step(std::size_t step) const;
};

// `measured_cpu_ms`, when given, returns the CPU time (ms, cumulative) of processes that the
// steps themselves run and time (a peer in lockstep, peer_program.h): it is not a neighbour's
// load, so it is taken out of the round's "other processes".
Interleaved interleave(const std::vector<std::function<void(int round)>>& steps, int rounds, double busy_cores,
                       const std::function<double()>& measured_cpu_ms = nullptr);

// One step's rounds.
struct TimedRounds {
  std::vector<double> ms;      // every round, in order
  std::vector<double> others;  // other processes' CPU use during each round, in cores
  std::vector<bool> clean;     // others <= busy_cores
  bool busy_rounds_included = false;
  double median_ms = 0;
  double cpu_ms_per_round = 0;  // the process's CPU time, over every round run

  // {"median_ms", "round_ms", "other_processes_cores", "round_clean", "busy_rounds_included"}
  nlohmann::ordered_json to_json() const;
};

TimedRounds time_rounds(const std::function<void()>& step, int rounds, double busy_cores);

}  // namespace strata::bench
