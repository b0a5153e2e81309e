#pragma once
// Hugging Face checkpoints in and out of strata runs (docs/pretrained.md):
//  - import: a transformers directory (config.json, model.safetensors or a sharded index,
//    generation_config.json, the tokenizer files) becomes a strata run whose one checkpoint
//    every command accepts (--model RUN) and every run may start from (train.base_model);
//  - export: a run's model written back in the layout transformers loads.
// recipes/model_outputs.h runs any model on token ids to compare it with transformers.
#include <filesystem>
#include <string>
#include <vector>

#include "strata/models/hf_checkpoint.h"
#include "strata/recipes/loaded_model.h"

namespace strata::recipes {

struct HfImportReport {
  std::filesystem::path checkpoint;  // the checkpoint written
  models::HfModel model;
  std::size_t tensors = 0;
  std::string tokenizer;  // the tokenizer's kind, or "" when the directory holds none
  std::vector<std::string> warnings;  // what imported but deserves a word (a tokenizer past the vocabulary)
};

// Reads `dir` and writes the run `out` (out/checkpoints/step-00000000, marked latest and
// best). strata::Error naming the file and the field or tensor for anything strata cannot
// represent; nothing is written then.
HfImportReport import_hf(const std::filesystem::path& dir, const std::filesystem::path& out,
                         const models::HfImportOptions& options = {});

// Whether `path` is a transformers directory (a config.json naming a model_type, and no strata
// checkpoint): what load_model() imports on the fly.
bool is_hf_directory(const std::filesystem::path& path);

// The model of a transformers directory, as load_model() gives a run's: imported into a
// scratch run that is removed once the model is in memory; `checkpoint` names `dir`.
LoadedModel load_hf_directory(const std::filesystem::path& dir, const LoadOptions& options);

// Writes config.json, model.safetensors, generation_config.json (generating models) and the
// tokenizer (when the run has one) into `out`, each atomically. Returns the model written.
models::HfModel export_hf(const std::filesystem::path& run, const std::filesystem::path& out);

}  // namespace strata::recipes
