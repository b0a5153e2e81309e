#pragma once
// A trained model inside its training task, its validation split the data to analyse: what
// `strata analyze heads|patterns` read. Making a training task is the assembly floor's work, so
// these analyses take a loader from their caller and call it once their options are checked.
#include <filesystem>
#include <functional>
#include <memory>

#include "strata/text/tokenizer.h"
#include "strata/train/task.h"

namespace strata::analysis {

struct AnalysedTask {
  std::filesystem::path checkpoint;
  std::unique_ptr<Tokenizer> tokenizer;  // the task reads it: declared first, destroyed last
  std::unique_ptr<train::TrainTask> task;
};

using AnalysedTaskLoader = std::function<AnalysedTask()>;

}  // namespace strata::analysis
