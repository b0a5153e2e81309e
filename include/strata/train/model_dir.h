#pragma once
// A trained model as the commands take it (--model DIR): a run directory (its best
// checkpoint, else its latest) or one checkpoint directory, with the tokenizer saved in it.
#include <filesystem>
#include <memory>

#include "strata/core/config.h"
#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"
#include "strata/text/tokenizer.h"

namespace strata::train {

// The checkpoint directory `path` stands for; strata::Error saying what was expected.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

struct LoadedModel {
  std::filesystem::path checkpoint;
  models::ModelConfig config;
  Config run;  // the whole config of the run that trained it, validated (defaults filled in)
  std::unique_ptr<Tokenizer> tokenizer;
};

// The model of the checkpoint, in eval mode; strata::Error when it holds another architecture.
// `prefix`, when given, is a tuned prefix file (models/prefix_file.h) to load onto this
// base; info.config is then the prefixed model's.
models::Seq2Seq load_seq2seq(const std::filesystem::path& path, LoadedModel& info,
                             const std::filesystem::path& prefix = {});
models::CausalLm load_causal_lm(const std::filesystem::path& path, LoadedModel& info);
// `task`, when not empty, is the data.task the encoder must have been trained for
// ("extractive", "segmentation"); `command` names the command in that error.
models::EncoderModel load_encoder(const std::filesystem::path& path, LoadedModel& info,
                                  const std::string& task = "", const std::string& command = "");

}  // namespace strata::train
