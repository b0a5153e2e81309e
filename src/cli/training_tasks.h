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

// A trained model (run or checkpoint directory) inside its training task, with `data` as the
// validation split: what the analyses read (`strata analyze heads|patterns`).
struct TrainedTask {
  std::filesystem::path checkpoint;
  std::unique_ptr<Tokenizer> tokenizer;  // the task reads it: declared first, destroyed last
  std::unique_ptr<train::TrainTask> task;
};
TrainedTask load_trained_task(const std::filesystem::path& model, const std::filesystem::path& data, bool quiet);

}  // namespace strata::cli
