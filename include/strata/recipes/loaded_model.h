#pragma once
// A trained model as the commands take it (--model DIR): a run directory (its best
// checkpoint, else its latest) or one checkpoint directory, with the tokenizer saved in it,
// or a Hugging Face transformers directory, imported on the fly (recipes/hf_models.h).
// Any registered architecture loads the same way: its build function, then the weights.
#include <filesystem>
#include <memory>
#include <string>

#include "strata/core/config.h"
#include "strata/decode/generate.h"
#include "strata/models/language_model.h"
#include "strata/models/encoder_model.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"
#include "strata/text/tokenizer.h"
#include "strata/train/task.h"

namespace strata::recipes {

struct LoadedModel {
  std::filesystem::path checkpoint;
  models::ModelConfig config;
  Config run;  // the whole config of the run that trained it, validated (defaults filled in)
  std::unique_ptr<Tokenizer> tokenizer;  // null only when loaded without one (LoadOptions)
  std::shared_ptr<torch::nn::Module> module;  // in eval mode
};

struct LoadOptions {
  // The architecture the caller needs ("" = any): strata::Error naming both when the
  // checkpoint holds another.
  std::string architecture;
  // An adapter file (models/adapter_file.h) to load onto the checkpoint's model, its base;
  // one with prefixes or PALs builds the model with them (info.config is then the adapted
  // model's, and info.run cuts the data as its prefix blocking needs).
  std::filesystem::path adapter;
  // Fold LoRA into the weights for inference (nn::merge_lora); false keeps it apart.
  bool merge_lora = true;
  // false: a checkpoint without tokenizer/ loads (an imported model run on token ids).
  bool require_tokenizer = true;
  // "fused" or "reference" in place of the config's model.attention_kernel; "" = the config's.
  std::string attention_kernel;
};

// The checkpoint's model, whatever its architecture, with the adapter it was trained with
// (the run's adapter.* keys) and the one `options` adds.
LoadedModel load_model(const std::filesystem::path& path, const LoadOptions& options = {});

// Typed forms for the commands of one architecture. `adapter`, when given, is an adapter file
// to load onto the checkpoint's model, as LoadOptions::adapter.
models::Seq2Seq load_seq2seq(const std::filesystem::path& path, LoadedModel& info,
                             const std::filesystem::path& adapter = {});
// Any language model (causal_lm, bst_lm, ...): strata::Error for another kind of model.
std::shared_ptr<models::LanguageModel> load_language_model(const std::filesystem::path& path, LoadedModel& info,
                                                           const std::filesystem::path& adapter = {});
// How long continue_prompts took to read the prompt and choose the first token (the
// stepper made and its first step run), and how many steps decoding ran in all: so the
// prompt's cost and each later token's can be told apart.
struct ContinueTiming {
  double first_step_seconds = 0;
  std::int64_t steps = 0;
};

// Continues each prompt ([B, T] int64, T >= 1) with the stepper of the model's architecture
// (`use_cache` false recomputes every step): what `strata lm generate` runs. strata::Error for
// an architecture that does not generate. `timing`, when not null, gets the above.
decode::Sequences continue_prompts(const LoadedModel& model, const at::Tensor& prompts,
                                   const decode::GenerationOptions& options, bool use_cache,
                                   ContinueTiming* timing = nullptr);

// `task`, when not empty, is the data.task the encoder must have been trained for
// ("extractive", "segmentation"); `command` names the command in that error.
models::EncoderModel load_encoder(const std::filesystem::path& path, LoadedModel& info,
                                  const std::string& task = "", const std::string& command = "",
                                  const std::filesystem::path& adapter = {});

// A trained model inside its training task, with `data` as the validation split: what the
// analyses read (`strata analyze heads|patterns`).
struct TrainedTask {
  std::filesystem::path checkpoint;
  std::unique_ptr<Tokenizer> tokenizer;  // the task reads it: declared first, destroyed last
  std::unique_ptr<train::TrainTask> task;
};
TrainedTask load_trained_task(const std::filesystem::path& model, const std::filesystem::path& data, bool quiet);

}  // namespace strata::recipes
