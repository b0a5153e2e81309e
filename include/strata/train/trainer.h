#pragma once
// The training loop: token-budget batches, AdamW with warm-up and decay, clipping,
// accumulation; training loss every log_every steps and an evaluation (validation loss,
// task metrics, a checkpoint) every eval_every steps; early stopping; exact resumption.
//
// Reproducibility: batches come from (seed, epoch) alone and dropout is reseeded from
// (seed, step) before every update, so a run resumed from a checkpoint repeats, bit for bit
// on CPU, what the uninterrupted run would have done.
//
// RUN_DIR gets metrics.jsonl (one JSON object per line, "split" train or valid) and
// checkpoints/ (train/checkpoint.h). A NaN or infinite loss stops the run with an error
// naming the step, leaving the last good checkpoint as it was; Ctrl-C saves a checkpoint and
// returns with interrupted set.
//
// Data-parallel (RunInfo::group): every rank plans the same global batches and reads its
// shard of each (shard_of); the loss is normalised by the labels of the whole batch and the
// gradients summed over ranks (GradientReducer), so the update is the one-process update of
// the same batch. Rank 0 alone evaluates and writes metrics, checkpoints and progress; the
// others start from rank 0's weights (and, on --resume, from its checkpoint, whatever world
// size wrote it) and follow its decisions to stop.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/train/run_config.h"
#include "strata/train/task.h"

namespace strata::train {

class ProcessGroup;

struct RunInfo {
  std::filesystem::path run_dir;
  nlohmann::json model_config;   // saved in every checkpoint's config.json
  nlohmann::json run_config;
  std::filesystem::path tokenizer_dir;  // copied into every checkpoint; may be empty
  bool resume = false;   // continue from RUN_DIR/checkpoints/latest
  bool quiet = false;    // no progress bar
  ProcessGroup* group = nullptr;  // a data-parallel run's processes; null for one process
};

struct TrainResult {
  std::int64_t steps = 0;
  std::string stop_reason;  // "max_steps", "max_epochs", "max_minutes", "patience", "interrupted"
  std::optional<double> best_metric;
  std::optional<std::int64_t> best_step;
  std::filesystem::path last_checkpoint;
};

TrainResult run_training(TrainTask& task, const TrainOptions& options, const RunInfo& run);

}  // namespace strata::train
