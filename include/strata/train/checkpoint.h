#pragma once
// Checkpoints: a directory that holds everything needed to resume a run or use its model.
//
//   model.safetensors      every named parameter and buffer of the model
//   optimizer.safetensors  AdamW state tensors; metadata "step" = the optimizer's step count
//   config.json            {"model": <model config>, "run": <whole run config>}
//   trainer_state.json     {"step", "epoch", "batch_in_epoch", "best_metric", "best_step",
//                           "seed", ...free-form keys}
//   tokenizer/             a copy of the tokenizer directory, when one was given
//
// In a run directory checkpoints live at RUN/checkpoints/step-00001234; the text files
// RUN/checkpoints/latest and RUN/checkpoints/best name one of them each.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/train/adamw.h"
#include "strata/train/trainer_state.h"

namespace torch::nn {
class Module;
}

namespace strata::train {

struct CheckpointContents {
  NamedTensors weights;          // module_tensors(model)
  NamedTensors optimizer_state;  // AdamW::state_tensors()
  std::int64_t optimizer_step = 0;
  nlohmann::json model_config = nlohmann::json::object();
  nlohmann::json run_config = nlohmann::json::object();
  TrainerState trainer_state;
  std::filesystem::path tokenizer_dir;  // empty: no tokenizer/ in the checkpoint
};

struct Checkpoint {
  std::filesystem::path dir;
  std::map<std::string, at::Tensor> weights;
  std::map<std::string, at::Tensor> optimizer_state;
  std::int64_t optimizer_step = 0;
  nlohmann::json model_config;
  nlohmann::json run_config;
  TrainerState trainer_state;
  std::optional<std::filesystem::path> tokenizer_dir;  // dir/tokenizer when present
};

// Every named parameter and buffer of the module.
NamedTensors module_tensors(const torch::nn::Module& module);

// Writes the checkpoint into the sibling "<dir>.tmp-<pid>" (files fsynced), then renames it
// onto dir. When dir exists it is first renamed to "<dir>.old-<pid>", the new one renamed into
// place, and the old one removed; a process killed between those renames leaves no dir, but
// both "<dir>.old-<pid>" (the previous checkpoint) and "<dir>.tmp-<pid>" (the new, complete
// one) on disk: rename either back to recover. On any failure (a full disk, say) the
// temporary is removed, a previous checkpoint at dir is left intact, and a strata::Error
// says what failed.
void save_checkpoint(const std::filesystem::path& dir, const CheckpointContents& contents);

// strata::Error naming the file that is missing or malformed.
Checkpoint load_checkpoint(const std::filesystem::path& dir);

// strata::Error naming `source` unless `given` holds exactly the names of `expected`, each
// with the same shape: it lists the missing and unexpected names, or gives the first shape
// mismatch with both shapes.
void check_tensors_match(const NamedTensors& expected, const std::map<std::string, at::Tensor>& given,
                         const std::string& source);

// Copies the tensors into the module's parameters and buffers (without autograd) after
// check_tensors_match: weights of another architecture are a clear error. `elsewhere`: the
// module's tensors that these weights do not hold (an adapter file's), left as they are.
void load_weights_into(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                       const std::string& source_name, const std::set<std::string>& elsewhere = {});

// RUN/checkpoints/step-00001234
std::filesystem::path checkpoint_dir(const std::filesystem::path& run_dir, std::int64_t step);

// Write RUN/checkpoints/latest or best (atomically) naming the checkpoint of `step`.
void mark_latest_checkpoint(const std::filesystem::path& run_dir, std::int64_t step);
void mark_best_checkpoint(const std::filesystem::path& run_dir, std::int64_t step);

// The checkpoint RUN/checkpoints/latest (or best) names; nullopt without that file, and a
// strata::Error when it names a directory that does not exist.
std::optional<std::filesystem::path> find_latest_checkpoint(const std::filesystem::path& run_dir);
std::optional<std::filesystem::path> find_best_checkpoint(const std::filesystem::path& run_dir);

// The checkpoint directory a --model argument stands for: `path` itself when it holds
// model.safetensors, else a run directory's best checkpoint, else its latest; strata::Error
// saying what was expected.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// Clears what saves killed midway left in RUN/checkpoints, once their process is gone: a
// "<name>.old-<pid>" whose checkpoint is missing is renamed back (it is the previous, complete
// checkpoint), and other "*.tmp-<pid>" / "*.old-<pid>" directories are removed. One line per
// action, for the log. The trainer calls it before it starts or resumes a run.
std::vector<std::string> recover_interrupted_saves(const std::filesystem::path& run_dir);

// Removes all but the newest keep_last step-* checkpoints, never the ones that latest and
// best name; keep_last 0 keeps everything. Call it after mark_latest_checkpoint.
void prune_checkpoints(const std::filesystem::path& run_dir, std::int64_t keep_last);

}  // namespace strata::train
