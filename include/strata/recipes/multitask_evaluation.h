#pragma once
// A trained ca_mtl model scored on one split of a multi-task suite: each task's metric, their
// mean, and every example's prediction (what a paired bootstrap between two systems reads).
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::recipes {

struct MultitaskEvaluation {
  // {"model", "suite", "split", "tasks": {NAME: {"metric", "value", "examples"}}, "score"}
  nlohmann::ordered_json summary;
  // One per example, task by task: {"task", "index", "gold", "predicted"} (classes by name;
  // numbers for a regression).
  std::vector<nlohmann::ordered_json> predictions;
};

// `suite` empty = the suite the model was validated on (its run's data.valid). per_task: at
// most this many examples of each task (0 = all). strata::Error when the model is not a
// ca_mtl model, or the suite lacks one of its tasks or has it with other classes.
MultitaskEvaluation evaluate_multitask(const std::filesystem::path& model, std::filesystem::path suite,
                                       const std::string& split, std::size_t per_task);

}  // namespace strata::recipes
