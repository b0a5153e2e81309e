#include "strata/bench/child_process.h"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/Parallel.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"

extern char** environ;

namespace strata::bench {

long status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  return -1;
}

void prepare_child(int threads) {
  at::set_num_threads(threads);
  at::manual_seed(1234);
  (void)at::mm(at::randn({64, 64}), at::randn({64, 64}));
}

void MemoryMarks::inputs_built() { inputs_kb_ = status_kb("VmRSS"); }

void MemoryMarks::rounds_done() { hwm_kb_ = status_kb("VmHWM"); }

TimedRounds time_child_step(const std::function<void()>& step, int rounds, MemoryMarks& marks, int warmups) {
  nlohmann::ordered_json no_peer;
  return time_child_steps({step}, nullptr, rounds, marks, warmups, no_peer).of_step(0);
}

Interleaved time_child_steps(const std::vector<std::function<void()>>& steps, PeerProcess* peer, int rounds,
                             MemoryMarks& marks, int warmups, nlohmann::ordered_json& peer_timing) {
  marks.inputs_built();
  for (int i = 0; i < warmups; ++i)
    for (const auto& step : steps) step();
  std::vector<std::function<void(int)>> own;
  for (const auto& step : steps) own.push_back([&step](int) { step(); });
  // A peer's process run between two of our steps empties the caches for whichever comes next
  // (a window at L = 1,024 read 0.673 of dense so, 0.56 without), so several steps are timed
  // among themselves, and the peer's rounds run beside the first step alone, in rounds of
  // their own.
  Interleaved t;
  if (peer == nullptr || steps.size() > 1) t = interleave(own, rounds, kBusyCores);
  if (peer == nullptr) {
    marks.rounds_done();
    return t;
  }
  std::vector<double> peer_ms;
  bool answered = true;
  const std::vector<std::function<void(int)>> beside{own[0], [&](int round) {
    const std::optional<nlohmann::ordered_json> answer = answered ? peer->round(round) : std::nullopt;
    answered = answer.has_value();
    peer_ms.push_back(answered ? (*answer)["ms"].get<double>() : 0.0);
  }};
  Interleaved lockstep = interleave(beside, rounds, kBusyCores, [peer] { return peer->rounds_cpu_ms(); });
  marks.rounds_done();
  const std::optional<nlohmann::ordered_json> summary = answered ? peer->finish() : std::nullopt;
  peer_timing = nullptr;
  if (summary) {
    peer_timing = *summary;
    peer_timing["median_ms"] = median_of(lockstep.kept_of(peer_ms));
    peer_timing["rounds_ms"] = peer_ms;
    peer_timing["round_clean"] = lockstep.clean;
  }
  lockstep.ms.pop_back();  // the peer's column: its own times are in peer_timing
  lockstep.cpu_ms.pop_back();
  return steps.size() > 1 ? t : lockstep;
}

void MemoryMarks::add_to(nlohmann::ordered_json& result) const {
  result["inputs_kb"] = inputs_kb_;
  result["hwm_kb"] = hwm_kb_;
}

CaseMeasurement run_case_in_child(const std::vector<std::string>& command, const std::string& case_name,
                                  const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::string name;  // for messages: "strata bench attention", "bench_training"
  for (const std::string& word : command) name += (name.empty() ? "" : " ") + word;
  const fs::path out = fs::temp_directory_path() / fmt::format("strata_bench_{}_{}.json", ::getpid(), case_name);
  std::vector<std::string> words = command;
  for (const std::string& word : {std::string("--child"), case_name, std::string("--child-out"), out.string()})
    words.push_back(word);
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  if (const int rc = ::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ); rc != 0)
    throw Error(fmt::format("{}: cannot start the child for case {}: {}", name, case_name, std::strerror(rc)));
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(out);
    throw Error(fmt::format("{}: case {} failed (wait status {}); its messages are above", name, case_name, status));
  }
  CaseMeasurement m;
  m.result = nlohmann::ordered_json::parse(read_file(out));
  fs::remove(out);
  m.maxrss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;
  if (m.result.is_object() && m.result.contains("hwm_kb")) {
    const double hwm_kb = m.result["hwm_kb"].get<double>(), inputs_kb = m.result["inputs_kb"].get<double>();
    m.hwm_mb = hwm_kb / 1024.0;
    m.growth_mb = (hwm_kb - inputs_kb) / 1024.0;
    m.result.erase("hwm_kb");
    m.result.erase("inputs_kb");
    // A child that ran a peer in lockstep waited for it, so ru_maxrss counts the peer's peak
    // too; its own VmHWM is the case's.
    if (m.result.contains("peer")) m.maxrss_mb = m.hwm_mb;
  }
  return m;
}

}  // namespace strata::bench
