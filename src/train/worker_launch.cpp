#include "strata/train/worker_launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata::train {

namespace {

using Clock = std::chrono::steady_clock;

// This process's own command line, to run again as each worker.
std::vector<std::string> own_command_line() {
  const std::string text = read_file("/proc/self/cmdline");
  std::vector<std::string> args;
  std::string arg;
  for (char c : text) {
    if (c == '\0') {
      args.push_back(arg);
      arg.clear();
    } else {
      arg += c;
    }
  }
  if (!arg.empty()) args.push_back(arg);
  return args;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return fmt::format("was killed by signal {} ({})", signal, ::strsignal(signal));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

int exit_code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

struct Worker {
  int rank;
  pid_t pid;
  std::optional<int> status;
};

[[noreturn]] void exec_worker(const std::vector<std::string>& args, const LaunchOptions& options, int local_rank) {
  const int rank = options.node_rank * options.nproc + local_rank;
  ::setenv("WORLD_SIZE", std::to_string(options.nnodes * options.nproc).c_str(), 1);
  ::setenv("RANK", std::to_string(rank).c_str(), 1);
  ::setenv("LOCAL_RANK", std::to_string(local_rank).c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", std::to_string(options.nproc).c_str(), 1);
  ::setenv("MASTER_ADDR", options.master_addr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(options.master_port).c_str(), 1);
  ::setenv("STRATA_DDP_TIMEOUT", std::to_string(options.timeout_s).c_str(), 1);
  if (rank != 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
  }
  std::signal(SIGINT, SIG_DFL);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  std::fprintf(stderr, "strata: cannot start worker %d: %s\n", rank, std::strerror(errno));
  ::_exit(127);
}

}  // namespace

int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error("--nproc: cannot open a socket to find a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  ::close(fd);
  if (!ok) throw Error("--nproc: cannot find a free port on 127.0.0.1; give one with --master 127.0.0.1:PORT");
  return ntohs(address.sin_port);
}

void parse_master(const std::string& text, LaunchOptions& options) {
  const auto colon = text.rfind(':');
  if (text.empty() || colon == 0) throw Error("--master: '" + text + "' is not HOST or HOST:PORT");
  if (colon == std::string::npos) {
    options.master_addr = text;
    return;
  }
  options.master_addr = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  char* end = nullptr;
  const long value = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || value < 1 || value > 65535)
    throw Error("--master: '" + port + "' is not a port (1-65535)");
  options.master_port = static_cast<int>(value);
}

int launch_workers(const LaunchOptions& given) {
  LaunchOptions options = given;
  if (options.nproc < 1) throw Error("--nproc: must be at least 1");
  if (options.nnodes < 1) throw Error("--nnodes: must be at least 1");
  if (options.node_rank < 0 || options.node_rank >= options.nnodes)
    throw Error(fmt::format("--node-rank: {} is not below --nnodes {}", options.node_rank, options.nnodes));
  if (options.timeout_s < 1) throw Error("--ddp-timeout: must be at least 1 second");
  if (options.master_port == 0) {
    if (options.nnodes > 1) throw Error("--master: give HOST:PORT of rank 0's machine when several machines join");
    options.master_port = free_loopback_port();
  }
  const std::vector<std::string> args = own_command_line();
  std::fflush(stdout);
  std::fflush(stderr);

  // Ctrl-C reaches the workers too (one process group): they agree on a step and save.
  struct sigaction ignore = {}, previous = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &previous);

  std::vector<Worker> workers;
  for (int local = 0; local < options.nproc; ++local) {
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(fmt::format("--nproc: cannot start worker {}: {}", local, std::strerror(errno)));
    if (pid == 0) exec_worker(args, options, local);
    workers.push_back({options.node_rank * options.nproc + local, pid, std::nullopt});
  }

  // After a failure the others get this long to notice and stop on their own: enough to time
  // out on a silent peer and name it.
  const std::chrono::seconds grace(std::min(options.timeout_s, 10) + 3);
  std::optional<int> failure;  // the first failing worker's exit code
  Clock::time_point kill_at = Clock::time_point::max();  // when the survivors of a failure are killed
  std::size_t running = workers.size();
  while (running > 0) {
    for (Worker& w : workers) {
      if (w.status) continue;
      int status = 0;
      if (::waitpid(w.pid, &status, WNOHANG) != w.pid) continue;
      w.status = status;
      --running;
      if (exit_code_of(status) == 0 || failure) continue;
      failure = exit_code_of(status);
      std::fprintf(stderr, "strata: rank %d (pid %d) %s; the other workers stop\n", w.rank, static_cast<int>(w.pid),
                   describe_status(status).c_str());
      kill_at = Clock::now() + grace;
    }
    if (Clock::now() > kill_at) {
      for (Worker& w : workers)
        if (!w.status) {
          std::fprintf(stderr, "strata: rank %d (pid %d) did not stop within %lld s of the failure: killed\n", w.rank,
                       static_cast<int>(w.pid), static_cast<long long>(grace.count()));
          ::kill(w.pid, SIGKILL);
        }
      kill_at = Clock::time_point::max();
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  sigaction(SIGINT, &previous, nullptr);
  return failure.value_or(0);
}

}  // namespace strata::train
