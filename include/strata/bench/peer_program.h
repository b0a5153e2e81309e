#pragma once
// A peer measured outside this process: bench/peers/run runs one of bench/peers/'s Python
// scripts (PyTorch 2.6 in its own Debian 13 root) and prints one JSON line. The benchmark
// that calls it times its own cases first, then the peer's, under the same OMP_NUM_THREADS
// and OPENBLAS_CORETYPE.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::bench {

// Runs `runner script args...` with OMP_NUM_THREADS = threads and returns the JSON of its
// last stdout line. Nullopt, with the reason printed, when the peer cannot run here (no
// root: runner exit 3; not root) or fails; the benchmark then goes on without it.
std::optional<nlohmann::ordered_json> run_peer(const std::string& runner, const std::string& script,
                                               const std::vector<std::string>& args, int threads);

}  // namespace strata::bench
