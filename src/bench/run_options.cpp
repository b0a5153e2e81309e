#include "strata/bench/run_options.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace strata::bench {

void RunOptions::resolve(int default_rounds, int quick_rounds) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (rounds <= 0) rounds = quick ? quick_rounds : default_rounds;
}

std::vector<std::string> RunOptions::child_args() const {
  std::vector<std::string> args{"--threads", std::to_string(threads), "--rounds", std::to_string(rounds)};
  if (quick) args.push_back("--quick");
  return args;
}

std::string default_json_path(const std::string& name) {
  const char* dir = std::getenv("STRATA_BENCH_JSON_DIR");
  return ((dir ? std::filesystem::path(dir) : std::filesystem::current_path()) / (name + ".json")).string();
}

}  // namespace strata::bench
