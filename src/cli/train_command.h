#pragma once
// What `strata train`, `strata lm train` and `strata pretrain` share: their flags and the run
// itself (cmd_train.cpp).
#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>


namespace strata::cli {

struct TrainFlags {
  std::string config;
  std::string recipe;
  std::string base;
  std::string adapter;  // adapter.name
  std::string out;
  std::optional<double> train_fraction;  // data.train_fraction
  std::vector<std::string> overrides;
  std::vector<std::string> fixed;  // key=value settings the command itself fixes, applied last
  // A key=value setting the command fixes by the config's model.architecture, applied after
  // `fixed`; when not empty, a config of an architecture it does not list is refused.
  std::map<std::string, std::string> fixed_by_architecture;
  bool resume = false;
  bool print_config = false;
  bool quiet = false;
  // Data-parallel training (train/worker_launch.h): workers here, machines, this one's index,
  // rank 0's HOST[:PORT], and how long a collective waits for a silent peer.
  int nproc = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master;
  int ddp_timeout = 300;
};

std::shared_ptr<TrainFlags> add_train_flags(CLI::App* sub);

// Trains the run the flags describe; strata::Error when `architecture` is not empty and the
// config asks for another.
void run_train(const TrainFlags& flags, const std::string& architecture);

}  // namespace strata::cli
