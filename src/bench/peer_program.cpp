#include "strata/bench/peer_program.h"

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace strata::bench {

namespace {

std::string shell_quoted(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::optional<nlohmann::ordered_json> run_peer(const std::string& runner, const std::string& script,
                                               const std::vector<std::string>& args, int threads) {
  std::string command = "OMP_NUM_THREADS=" + std::to_string(threads) + " " + shell_quoted(runner) +
                        " " + shell_quoted(script);
  for (const std::string& arg : args) command += " " + shell_quoted(arg);
  std::fprintf(stderr, "peer: %s\n", command.c_str());
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    std::printf("peer: could not start %s\n", runner.c_str());
    return std::nullopt;
  }
  std::string output;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = ::pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 3) {
    std::printf("peer: not run (no PyTorch 2.6 root: build it once with 'sudo bench/peers/setup')\n");
    return std::nullopt;
  }
  while (!output.empty() && output.back() == '\n') output.pop_back();
  const std::string last = output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  nlohmann::ordered_json result = nlohmann::ordered_json::parse(last, nullptr, false);
  if (code != 0 || result.is_discarded() || !result.is_object()) {
    std::printf("peer: %s %s failed (exit %d); its stderr is above\n", runner.c_str(), script.c_str(), code);
    return std::nullopt;
  }
  return result;
}

}  // namespace strata::bench
