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
  std::vector<std::function<void(int)>> round_steps;
  for (const auto& step : steps) round_steps.push_back([&step](int) { step(); });
  std::vector<double> peer_ms;
  bool answered = peer != nullptr;
  if (peer != nullptr)
    round_steps.push_back([&](int round) {
      const std::optional<nlohmann::ordered_json> answer = answered ? peer->round(round) : std::nullopt;
      answered = answer.has_value();
      peer_ms.push_back(answered ? (*answer)["ms"].get<double>() : 0.0);
    });
  Interleaved t = interleave(round_steps, rounds, kBusyCores,
                             [peer] { return peer != nullptr ? peer->rounds_cpu_ms() : 0.0; });
  marks.rounds_done();
  if (peer == nullptr) return t;
  const std::optional<nlohmann::ordered_json> summary = answered ? peer->finish() : std::nullopt;
  peer_timing = nullptr;
  if (summary) {
    peer_timing = *summary;
    peer_timing["median_ms"] = median_of(t.kept_of(peer_ms));
    peer_timing["rounds_ms"] = peer_ms;
    peer_timing["round_clean"] = t.clean;
  }
  t.ms.pop_back();  // the peer's column: its own times are in peer_timing
  t.cpu_ms.pop_back();
  return t;
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
