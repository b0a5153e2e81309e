#pragma once
// The training task a run's config asks for (summarisation, language modelling, extractive
// summarisation, topic segmentation), with a new model: `strata train` trains it, and the
// analyses (`strata analyze heads|patterns`) load trained weights into it and read its
// validation loss.
#include <filesystem>
#include <memory>

#include "strata/core/config.h"
#include "strata/models/model_config.h"
#include "strata/text/tokenizer.h"
#include "strata/train/task.h"

namespace strata::cli {

struct TaskData {
  std::filesystem::path train, valid;  // either may be empty
  bool quiet = false;
};

std::unique_ptr<train::TrainTask> make_training_task(const Config& config, const models::ModelConfig& model,
                                                     const Tokenizer& tokenizer, const TaskData& data);

}  // namespace strata::cli
