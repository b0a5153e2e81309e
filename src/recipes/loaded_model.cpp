#include "strata/recipes/loaded_model.h"

#include <torch/torch.h>

#include <chrono>
#include <set>

#include "strata/core/error.h"
#include "strata/decode/generate.h"
#include "strata/models/adapter_file.h"
#include "strata/nn/adapters.h"
#include "strata/recipes/adapters.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/hf_models.h"
#include "strata/train/checkpoint.h"

namespace strata::recipes {

namespace fs = std::filesystem;

namespace {

// The stepper it wraps, with the time its first step ended (since `start`) and the steps run
// written to `timing` as decoding goes.
class TimedSteps : public decode::StepModel {
 public:
  TimedSteps(decode::StepModel& inner, std::chrono::steady_clock::time_point start, ContinueTiming& timing)
      : inner_(inner), start_(start), timing_(timing) {
    timing_ = {};
  }
  std::int64_t rows() const override { return inner_.rows(); }
  at::Tensor step(const at::Tensor& tokens) override {
    at::Tensor next = inner_.step(tokens);
    if (timing_.steps++ == 0)
      timing_.first_step_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return next;
  }
  void reorder(const at::Tensor& index) override { inner_.reorder(index); }

 private:
  decode::StepModel& inner_;
  std::chrono::steady_clock::time_point start_;
  ContinueTiming& timing_;
};

// Everything but the weights: the checkpoint, its configs (validated) and its tokenizer.
train::Checkpoint read_checkpoint(const fs::path& path, const std::string& architecture, LoadedModel& info,
                                  bool require_tokenizer) {
  info.checkpoint = train::resolve_checkpoint(path);
  train::Checkpoint checkpoint = train::load_checkpoint(info.checkpoint);
  const std::string config_file = (info.checkpoint / "config.json").string();
  info.config = models::ModelConfig::from_json(checkpoint.model_config, config_file);
  if (!architecture.empty() && info.config.architecture != architecture)
    throw Error(config_file + ": the model is a " + info.config.architecture + ", this command needs a " + architecture);
  info.run = Config::from_json(checkpoint.run_config, config_file);
  info.run.validate(run_schema());
  if (checkpoint.tokenizer_dir) {
    info.tokenizer = load_tokenizer(*checkpoint.tokenizer_dir);
  } else if (require_tokenizer) {
    throw Error(info.checkpoint.string() + ": no tokenizer/ in the checkpoint (an imported model without one "
                "runs on token ids: strata forward, strata generate)");
  }
  return checkpoint;
}

std::string weights_file(const LoadedModel& info) { return (info.checkpoint / "model.safetensors").string(); }

bool has_unmerged_lora(const torch::nn::Module& model) {
  for (const auto& [name, linear] : nn::adaptable_linears(model))
    if (linear->has_lora() && !linear->lora_merged()) return true;
  return false;
}

}  // namespace

LoadedModel load_model(const fs::path& path, const LoadOptions& options) {
  if (is_hf_directory(path)) return load_hf_directory(path, options);
  LoadedModel info;
  const train::Checkpoint checkpoint = read_checkpoint(path, options.architecture, info, options.require_tokenizer);
  if (!options.attention_kernel.empty()) {
    attn::kernel_from_name(options.attention_kernel);  // names the known kernels otherwise
    info.config.attention_kernel = options.attention_kernel;
  }
  std::optional<models::AdapterFile> adapters;
  if (!options.adapter.empty()) {
    adapters = models::read_adapter_file(options.adapter);
    info.config = models::adapted_config(info.config, *adapters, options.adapter);
    // Blocked prefixes read the layout's segments: the data is cut as the adapter needs.
    if (const std::int64_t blocks = info.config.prefix_encoder_blocks; blocks > 1) {
      info.run.apply_override("model.prefix_encoder_blocks=" + std::to_string(blocks));
      info.run.apply_override("data.segments=" + std::to_string(blocks));
    }
  }
  info.module = build_model(info.config);
  torch::nn::Module& model = *info.module;
  // Tensors of adapters built into the model (prefixes, PALs) come from the adapter file.
  std::set<std::string> elsewhere;
  if (adapters)
    for (std::string& name : nn::adapter_parameter_names(model)) elsewhere.insert(std::move(name));
  apply_adapter(info.run, model);  // the run's own: the checkpoint holds its tensors
  train::load_weights_into(model, checkpoint.weights, weights_file(info), elsewhere);
  if (adapters) models::load_adapter_file(*adapters, options.adapter, model);
  if (options.merge_lora && has_unmerged_lora(model)) nn::merge_lora(model);
  model.eval();
  return info;
}

models::Seq2Seq load_seq2seq(const fs::path& path, LoadedModel& info, const fs::path& adapter) {
  info = load_model(path, {"seq2seq", adapter});
  return model_as<models::Seq2Seq>(info.module, "seq2seq");
}

std::shared_ptr<models::LanguageModel> load_language_model(const fs::path& path, LoadedModel& info,
                                                           const fs::path& adapter) {
  info = load_model(path, {"", adapter});
  auto lm = std::dynamic_pointer_cast<models::LanguageModel>(info.module);
  if (!lm)
    throw Error((info.checkpoint / "config.json").string() + ": a " + info.config.architecture +
                " model, not a language model (causal_lm, bst_lm)");
  return lm;
}

decode::Sequences continue_prompts(const LoadedModel& model, const at::Tensor& prompts,
                                   const decode::GenerationOptions& options, bool use_cache,
                                   ContinueTiming* timing) {
  const Architecture& architecture = find_architecture(model.config.architecture);
  if (!architecture.stepper) throw Error("a " + architecture.name + " model does not generate text");
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();  // a stepper may read the prompt when made
  const std::unique_ptr<decode::StepModel> stepper = architecture.stepper(model.module, {prompts, {}, nullptr, use_cache});
  if (timing == nullptr) return decode::generate(*stepper, options);
  TimedSteps timed(*stepper, start, *timing);
  return decode::generate(timed, options);
}

models::EncoderModel load_encoder(const fs::path& path, LoadedModel& info, const std::string& task,
                                  const std::string& command, const fs::path& adapter) {
  info = load_model(path, {"encoder", adapter});
  const std::string trained = info.run.get<std::string>("data.task");
  if (!task.empty() && trained != task)
    throw Error((info.checkpoint / "config.json").string() + ": the encoder was trained for data.task '" + trained +
                "'; " + command + " needs one trained with data.task = " + task);
  return model_as<models::EncoderModel>(info.module, "encoder");
}

TrainedTask load_trained_task(const fs::path& model, const fs::path& data, bool quiet) {
  LoadedModel info = load_model(model, {.merge_lora = false});
  TrainedTask out;
  out.checkpoint = info.checkpoint;
  out.tokenizer = std::move(info.tokenizer);
  out.task = find_architecture(info.config.architecture)
                 .make_task(info.module, {info.run, info.config, *out.tokenizer, "", data, quiet});
  return out;
}

}  // namespace strata::recipes
