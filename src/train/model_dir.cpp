#include "strata/train/model_dir.h"

#include <torch/torch.h>

#include <type_traits>

#include "strata/core/error.h"
#include "strata/models/prefix_file.h"
#include "strata/train/checkpoint.h"
#include "strata/train/run_config.h"

namespace strata::train {

namespace fs = std::filesystem;

fs::path resolve_checkpoint(const fs::path& path) {
  if (fs::exists(path / "model.safetensors")) return path;
  if (auto best = find_best_checkpoint(path)) return *best;
  if (auto latest = find_latest_checkpoint(path)) return *latest;
  throw Error(path.string() + ": not a model: expected a checkpoint directory (with model.safetensors) " +
              "or a run directory (with checkpoints/latest)");
}

namespace {

template <class Model>
Model load(const fs::path& path, models::Architecture architecture, LoadedModel& info,
           const fs::path& prefix = {}) {
  info.checkpoint = resolve_checkpoint(path);
  Checkpoint checkpoint = load_checkpoint(info.checkpoint);
  const std::string config_file = (info.checkpoint / "config.json").string();
  info.config = models::ModelConfig::from_json(checkpoint.model_config, config_file);
  if (info.config.architecture != architecture)
    throw Error(config_file + ": the model is a " + models::architecture_name(info.config.architecture) +
                ", this command needs a " + models::architecture_name(architecture));
  info.run = Config::from_json(checkpoint.run_config, config_file);
  info.run.validate(run_schema());
  if (!checkpoint.tokenizer_dir) throw Error(info.checkpoint.string() + ": no tokenizer/ in the checkpoint");
  info.tokenizer = load_tokenizer(*checkpoint.tokenizer_dir);
  const std::string weights = (info.checkpoint / "model.safetensors").string();
  Model model{nullptr};
  if constexpr (std::is_same_v<Model, models::Seq2Seq>) {
    if (!prefix.empty()) {
      model = models::attach_prefix(info.config, info.checkpoint, prefix, [&](models::Seq2Seq& m) {
        load_weights_into(*m, checkpoint.weights, weights);
      });
      info.config = model->config();
    }
  }
  if (!model) {
    model = Model(info.config);
    load_weights_into(*model, checkpoint.weights, weights);
  }
  model->eval();
  return model;
}

}  // namespace

models::Seq2Seq load_seq2seq(const fs::path& path, LoadedModel& info, const fs::path& prefix) {
  return load<models::Seq2Seq>(path, models::Architecture::Seq2Seq, info, prefix);
}

models::CausalLm load_causal_lm(const fs::path& path, LoadedModel& info) {
  return load<models::CausalLm>(path, models::Architecture::CausalLm, info);
}

models::EncoderModel load_encoder(const fs::path& path, LoadedModel& info, const std::string& task,
                                  const std::string& command) {
  models::EncoderModel model = load<models::EncoderModel>(path, models::Architecture::Encoder, info);
  const std::string trained = info.run.get<std::string>("data.task");
  if (!task.empty() && trained != task)
    throw Error((info.checkpoint / "config.json").string() + ": the encoder was trained for data.task '" + trained +
                "'; " + command + " needs one trained with data.task = " + task);
  return model;
}

}  // namespace strata::train
