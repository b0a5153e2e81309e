#pragma once
// The settings of a training run: the sections model / data / train / decode of
// `strata train --config FILE.toml`, their defaults and help, and typed views of each.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/core/config.h"
#include "strata/data/denoising.h"
#include "strata/data/lm_examples.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/data/tlm_examples.h"
#include "strata/decode/generation_options.h"
#include "strata/train/lr_schedule.h"

namespace strata::train {

// Every key a run knows, with its default and a line of help.
ConfigSchema run_schema();

struct DataOptions {
  std::filesystem::path train, valid, test;  // JSONL datasets (LM: text files too); valid/test may be empty
  std::filesystem::path tokenizer;           // a strata tokenizer directory
  TruncationOptions truncation;
  std::size_t block_size = 256;              // language models: tokens per chunk
  LmBlocking blocking = LmBlocking::kStream;  // language models: documents concatenated or alone
  double train_fraction = 1.0;               // share of the training set used (low-resource runs)
  std::uint64_t fraction_seed = 1;           // which share: independent of the training seed
};

struct TrainOptions {
  std::uint64_t seed = 1;
  std::int64_t max_steps = 1000;
  std::int64_t max_epochs = 0;     // 0 = no limit
  double max_minutes = 0;          // 0 = no limit; stops after the first step past it
  double expected_minutes = 0;     // 0 = none; past it, a warning once (training goes on)
  LrSchedule schedule;
  double weight_decay = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double clip_norm = 1.0;          // 0 = no clipping
  std::int64_t accumulation = 1;   // batches per update
  double label_smoothing = 0.1;
  std::size_t max_tokens = 4096;   // per batch: rows × longest example
  std::size_t max_rows = 0;        // per batch; 0 = no limit beyond max_tokens
  std::int64_t log_every = 10;
  std::int64_t eval_every = 200;
  std::int64_t eval_docs = 100;    // validation documents decoded for ROUGE at each evaluation
  std::int64_t keep_checkpoints = 2;
  std::int64_t patience = 0;       // evaluations without improvement before stopping; 0 = off
  std::string metric = "valid_loss";  // early stopping and "best": valid_loss or a ROUGE key
  std::vector<std::string> freeze;    // parameter-name glob patterns
  std::vector<std::string> train_only;  // globs of the only parameters that train; empty = all
  std::int64_t threads = 0;           // 0 = every core
  bool skip_nonfinite = false;        // a NaN/inf loss or gradient skips the update instead of stopping
};

DataOptions data_options(const Config& config);

// The seq2seq examples of a dataset as a run with this config reads them: the samples of
// question-summary hierarchies (data.task = qs_hierarchy, data.qs_task) or summarisation
// documents, truncated as data.* says.
std::vector<Seq2SeqExample> load_seq2seq_data(const std::filesystem::path& path, const Tokenizer& tokenizer,
                                              const Config& config, bool verbose);
DenoisingOptions denoising_options(const Config& config);  // the pretrain.* keys
TlmFormat tlm_format(const Config& config);  // data.block_size and the tlm.* keys, checked
TrainOptions train_options(const Config& config);
decode::GenerationOptions generation_options(const Config& config);

}  // namespace strata::train
