#pragma once
// A training run assembled from its config: the tokenizer, the model config with every design
// compiled in, the architecture's model and task, a base's weights, the frozen set, the
// trainer, and (for prefix-tuning) the prefix file. `strata train`, `strata lm train` and
// `strata pretrain` are this with their own flags; a test can run it the same way.
#include <filesystem>
#include <optional>
#include <string>

#include "strata/core/config.h"
#include "strata/train/process_group.h"
#include "strata/train/trainer.h"

namespace strata::recipes {

struct RunRequest {
  std::filesystem::path out;  // the run directory
  bool resume = false;        // continue the run in `out` from its latest checkpoint
  bool quiet = false;         // no progress bars
  std::string architecture;   // the architecture the command trains; "" = any
  // This process's place in a data-parallel run (train/process_group.h); none: one process.
  std::optional<train::WorldOptions> world;
};

// Trains the run `config` describes (validated against run_schema()) into request.out.
// strata::Error for a config that cannot work, naming the key; the result says why it stopped.
// In a data-parallel run every rank calls this; rank 0 alone prints and writes files.
train::TrainResult run_training(const Config& config, const RunRequest& request);

}  // namespace strata::recipes
