#include "strata/bench/peer_program.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

extern char** environ;

namespace strata::bench {

namespace {

using Json = nlohmann::ordered_json;

std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string peer_command(const std::string& runner, const std::string& script, const std::vector<std::string>& args,
                         int threads) {
  std::string command = "OMP_NUM_THREADS=" + std::to_string(threads) + " " + shell_quoted(runner) + " " +
                        shell_quoted(script);
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  return command;
}

// `sh -c command` with its stdin and stdout on pipes; stderr stays the benchmark's.
bool spawn(const std::string& command, pid_t& pid, std::FILE*& to, std::FILE*& from) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return false;
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  const int failed = ::posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  if (failed != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return false;
  }
  to = ::fdopen(in[1], "w");
  from = ::fdopen(out[0], "r");
  return true;
}

}  // namespace

PeerProcess::PeerProcess(std::string what, pid_t pid, std::FILE* to, std::FILE* from)
    : what_(std::move(what)), pid_(pid), to_(to), from_(from) {}

PeerProcess::~PeerProcess() { stop(); }

std::unique_ptr<PeerProcess> PeerProcess::start(const std::string& runner, const std::string& script,
                                                std::vector<std::string> args, int threads) {
  // A peer that dies between rounds must not take the benchmark with it on the next write.
  std::signal(SIGPIPE, SIG_IGN);
  args.push_back("--lockstep");
  const std::string command = peer_command(runner, script, args, threads);
  std::fprintf(stderr, "peer: %s\n", command.c_str());
  pid_t pid = -1;
  std::FILE *to = nullptr, *from = nullptr;
  if (!spawn(command, pid, to, from)) {
    std::printf("peer: could not start %s\n", runner.c_str());
    return nullptr;
  }
  std::unique_ptr<PeerProcess> peer(new PeerProcess(runner + " " + script, pid, to, from));
  std::optional<Json> ready = peer->next_json();
  if (!ready) {
    if (peer->stop()) std::printf("peer: %s printed no JSON line\n", peer->what_.c_str());
    return nullptr;
  }
  peer->ready_ = std::move(*ready);
  return peer;
}

std::optional<Json> PeerProcess::next_json() {
  if (from_ == nullptr) return std::nullopt;
  char* line = nullptr;
  std::size_t capacity = 0;
  std::optional<Json> found;
  while (!found && ::getline(&line, &capacity, from_) > 0) {
    Json parsed = Json::parse(line, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) found = std::move(parsed);
  }
  std::free(line);
  return found;
}

std::optional<Json> PeerProcess::round(int index) {
  if (to_ == nullptr) return std::nullopt;
  std::fprintf(to_, "round %d\n", index);
  std::fflush(to_);
  std::optional<Json> answer = next_json();
  if (!answer || !answer->contains("ms") || !answer->contains("cpu_ms")) {
    std::printf("peer: %s gave no timing for round %d\n", what_.c_str(), index);
    stop();
    return std::nullopt;
  }
  rounds_cpu_ms_ += (*answer)["cpu_ms"].get<double>();
  return answer;
}

std::optional<Json> PeerProcess::finish() {
  if (to_ == nullptr) return std::nullopt;
  std::fputs("end\n", to_);
  std::fflush(to_);
  std::optional<Json> last;
  for (std::optional<Json> next; (next = next_json());) last = std::move(next);
  const bool exited_cleanly = stop();
  if (exited_cleanly && !last) std::printf("peer: %s printed no summary\n", what_.c_str());
  return exited_cleanly ? last : std::nullopt;
}

bool PeerProcess::stop() {
  if (pid_ < 0) return true;
  // Closing its stdin ends the peer's round loop.
  if (to_ != nullptr) std::fclose(to_);
  if (from_ != nullptr) std::fclose(from_);
  to_ = from_ = nullptr;
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 3)
    std::printf("peer: not run (no PyTorch 2.6 root: build it once with 'sudo bench/peers/setup')\n");
  else if (code != 0)
    std::printf("peer: %s failed (exit %d); its stderr is above\n", what_.c_str(), code);
  return code == 0;
}

}  // namespace strata::bench
