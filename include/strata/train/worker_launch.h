#pragma once
// `strata train --nproc N`: this machine's share of a data-parallel run, started as torchrun
// starts one. Each worker is this same command line, run again with torchrun's variables
// (WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and
// STRATA_DDP_TIMEOUT set, which make it a worker (world_from_environment) instead of a
// launcher. Rank 0 prints; the other workers' standard output is dropped, their errors kept.
#include <string>

namespace strata::train {

struct LaunchOptions {
  int nproc = 1;      // workers on this machine
  int nnodes = 1;     // machines
  int node_rank = 0;  // this machine's index: its workers are ranks node_rank·nproc …
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port of this machine (one machine only)
  int timeout_s = 300;  // how long a collective waits for a silent peer
};

// Parses "HOST" or "HOST:PORT" into options.master_addr / master_port (strata::Error naming
// --master when malformed).
void parse_master(const std::string& text, LaunchOptions& options);

// A port no one listens on now on 127.0.0.1 (the launcher's default for a one-machine run).
int free_loopback_port();

// Runs the workers to their end and returns this launcher's exit status: 0 when all exited 0,
// else the first failure's (128 + the signal for a killed worker), after saying which rank
// failed and how. Workers that outlive a failure by min(timeout, 10) + 3 s are killed and named. Ctrl-C is left
// to the workers (they agree on a step, save and exit).
int launch_workers(const LaunchOptions& options);

}  // namespace strata::train
