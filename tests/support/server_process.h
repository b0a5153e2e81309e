#pragma once
// A `strata serve` (or `strata explore`) child process with its output in files, for the CLI
// tests that serve a model; killed if the test leaves early.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "support/cli.h"

namespace strata::test_support {

class ServerProcess {
 public:
  ServerProcess(const std::string& args, const std::filesystem::path& dir, const std::string& command = "serve")
      : out_(dir / (command + ".out")), err_(dir / (command + ".err")) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string line = "exec " + std::string(STRATA_BINARY) + " " + command + " " + args + " >" + out_.string() +
                                  " 2>" + err_.string();
      ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~ServerProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // The port from "listening on http://HOST:PORT", or 0 when the server exits or a minute passes.
  int port() {
    const std::regex listening(R"(listening on http://[^:]+:(\d+))");
    for (int i = 0; i < 600; ++i) {
      std::smatch m;
      const std::string out = slurp(out_);
      if (std::regex_search(out, m, listening)) return std::stoi(m[1]);
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return 0;
  }
  // SIGTERM, then the exit status (-1 when it did not exit normally within a minute).
  int terminate() {
    if (!reaped_) {
      ::kill(pid_, SIGTERM);
      for (int i = 0; i < 600 && ::waitpid(pid_, &status_, WNOHANG) != pid_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      reaped_ = true;
    }
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
  }
  std::string err() const { return slurp(err_); }

 private:
  std::filesystem::path out_, err_;
  pid_t pid_ = -1;
  int status_ = -1;
  bool reaped_ = false;
};

}  // namespace strata::test_support
