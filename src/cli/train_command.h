#pragma once
// What `strata train`, `strata lm train` and `strata pretrain` share: their flags and the run
// itself (cmd_train.cpp).
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/models/model_config.h"

namespace strata::cli {

struct TrainFlags {
  std::string config;
  std::string recipe;
  std::string base;
  std::string out;
  std::optional<double> train_fraction;  // data.train_fraction
  std::vector<std::string> overrides;
  std::vector<std::string> fixed;  // key=value settings the command itself fixes, applied last
  bool resume = false;
  bool print_config = false;
  bool quiet = false;
};

std::shared_ptr<TrainFlags> add_train_flags(CLI::App* sub);

// Trains the run the flags describe; strata::Error when `required` is given and the config
// asks for another architecture.
void run_train(const TrainFlags& flags, std::optional<models::Architecture> required);

}  // namespace strata::cli
