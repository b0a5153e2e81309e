#pragma once
// Starting a model from a trained base: the base's weights are copied by name into a model
// that may hold more (adapters such as PALs or prefixes), which then trains on top of it.
#include <filesystem>
#include <string>
#include <vector>

#include "strata/models/model_config.h"

namespace torch::nn {
class Module;
}

namespace strata::train {

struct BaseLoadReport {
  std::filesystem::path checkpoint;  // the base checkpoint read
  std::vector<std::string> loaded;   // names copied from the base, in the model's order
  std::vector<std::string> missing;  // the model's names the base lacks (the adapter's)
  std::vector<std::string> unused;   // the base's names the model lacks, sorted
  std::vector<std::string> excluded; // the model's names left out by `exclude`, in the model's order
};

// Reads the base (a run directory: its best checkpoint, else its latest; or one checkpoint
// directory) and copies every tensor whose name the model has. strata::Error, before anything
// is copied, when the base's config.json has another architecture (than `config`'s or one of
// `other_architectures`), d_model, heads or vocab_size than `config` (naming the field and
// both values), or when a shared name has another shape (naming the tensor, both shapes and
// the base's weight file). Names matching a glob of `exclude` are not copied whatever their
// shape (a new head over a base trained for another task: train.base_exclude).
BaseLoadReport load_base_weights(torch::nn::Module& model, const models::ModelConfig& config,
                                 const std::filesystem::path& base,
                                 const std::vector<std::string>& other_architectures = {},
                                 const std::vector<std::string>& exclude = {});

// "loaded 42 tensors from BASE; 8 new (not in the base): a, b, ... ; 0 unused", for logs.
std::string describe(const BaseLoadReport& report);

}  // namespace strata::train
