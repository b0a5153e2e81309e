#include "bench_child.h"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "../../bench/cpu_load.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

extern char** environ;

namespace strata::cli {

long status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  return -1;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

nlohmann::ordered_json TimedRounds::to_json() const {
  return {{"median_ms", median_ms},
          {"round_ms", ms},
          {"other_processes_cores", others},
          {"round_clean", clean},
          {"busy_rounds_included", busy_rounds_included}};
}

TimedRounds time_rounds(const std::function<void()>& step, int rounds, double busy_cores) {
  TimedRounds t;
  int clean_rounds = 0;
  for (int round = 0; clean_rounds < rounds && round < 2 * rounds; ++round) {
    const bench::CpuSample start = bench::cpu_sample();
    step();
    const bench::CpuSample end = bench::cpu_sample();
    t.ms.push_back(std::chrono::duration<double, std::milli>(end.when - start.when).count());
    t.others.push_back(bench::other_cores(start, end));
    t.clean.push_back(t.others.back() <= busy_cores);
    clean_rounds += t.clean.back();
  }
  t.busy_rounds_included = clean_rounds * 2 < rounds;
  std::vector<double> kept;
  for (std::size_t r = 0; r < t.ms.size(); ++r)
    if (t.busy_rounds_included || t.clean[r]) kept.push_back(t.ms[r]);
  t.median_ms = median_of(kept);
  return t;
}

ChildResult run_case_in_child(const std::string& bench, const std::string& case_name,
                              const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() /
                       fmt::format("strata_bench_{}_{}_{}.json", bench, ::getpid(), case_name);
  std::vector<std::string> words{"strata", "bench", bench, "--child", case_name, "--child-out", out.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (const int rc = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ); rc != 0)
    throw Error(fmt::format("bench {}: cannot start the child for case {}: {}", bench, case_name, std::strerror(rc)));
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(out);
    throw Error(fmt::format("bench {}: case {} failed (wait status {}); its messages are above", bench,
                            case_name, status));
  }
  ChildResult r;
  r.result = nlohmann::ordered_json::parse(read_file(out));
  fs::remove(out);
  r.maxrss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return r;
}

}  // namespace strata::cli
