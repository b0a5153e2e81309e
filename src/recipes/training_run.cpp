#include "strata/recipes/training_run.h"

#include <torch/torch.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/data/tlm_examples.h"
#include "strata/models/adapter_file.h"
#include "strata/models/backbone_fingerprint.h"
#include "strata/nn/adapters.h"
#include "strata/recipes/adapters.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/loaded_model.h"
#include "strata/text/tokenizer.h"
#include "strata/train/base_model.h"
#include "strata/train/freeze.h"
#include "strata/train/run_config.h"

namespace strata::recipes {

namespace {

namespace fs = std::filesystem;

// The model config of the run, with the token ids the model needs from the tokenizer that
// feeds it.
models::ModelConfig model_config_for(const Config& config, const Tokenizer& tokenizer, const std::string& tokenizer_path) {
  models::ModelConfig m = model_config(config);
  auto need = [&](std::optional<std::int32_t> id, const char* what) {
    if (!id) throw Error(tokenizer_path + ": the tokenizer has no " + what + " token, which training needs");
    return static_cast<std::int64_t>(*id);
  };
  m.vocab_size = tokenizer.vocab_size();
  m.pad_id = need(tokenizer.pad_id(), "pad");
  m.eos_id = need(tokenizer.eos_id(), "eos");
  m.bos_id = need(tokenizer.bos_id(), "bos");
  m.decoder_start_id = m.bos_id;
  if (const auto sep = tokenizer.sep_id()) m.marker_id = *sep;
  if (config.get<std::string>("data.task") == "tlm") {
    const TlmMarkers parts = tlm_markers(tokenizer);
    m.segment_markers = std::to_string(parts.intro) + "," + std::to_string(parts.extract) + "," +
                        std::to_string(parts.summary) + "," + std::to_string(parts.rest);
  }
  if (const auto& complete = find_architecture(m.architecture).complete_config) complete(m, config);
  m.check();
  return m;
}

void print_parameters(torch::nn::Module& model, const std::vector<std::string>& frozen) {
  if (!frozen.empty()) std::printf("frozen: %zu parameter tensors\n", frozen.size());
  std::printf("%s\n", train::describe_parameters(train::count_parameters(model)).c_str());
}

// An adapted run's adapter as a small file beside it (from its best checkpoint, else its
// latest), for `--adapter FILE` on its base. It fits the base only while the backbone stayed
// frozen (train.train_only): say so when it did not.
void write_adapter(const fs::path& run_dir, const std::string& base) {
  LoadedModel info = load_model(run_dir, {.merge_lora = false});
  const fs::path file = run_dir / "adapter.safetensors";
  models::save_adapter_file(file, *info.module, info.config);
  std::printf("adapter: %s (%.1f KB, from %s)\n", file.string().c_str(), static_cast<double>(fs::file_size(file)) / 1024,
              info.checkpoint.filename().string().c_str());
  if (base.empty()) return;
  const LoadedModel base_info = load_model(base);
  if (models::backbone_fingerprint(*base_info.module) == models::backbone_fingerprint(*info.module)) {
    std::printf("adapter: loads onto %s with --adapter\n", base.c_str());
  } else {
    std::printf("adapter: more than the adapter trained (train.train_only), so the adapter file does not fit %s; "
                "use the run itself\n", base.c_str());
  }
}

}  // namespace

train::TrainResult run_training(const Config& run_config, const RunRequest& request) {
  std::unique_ptr<train::ProcessGroup> group;
  if (request.world && request.world->world_size > 1) group = std::make_unique<train::ProcessGroup>(*request.world);
  const bool lead = !group || group->rank() == 0;
  const Config config = with_adapter_settings(run_config);
  const train::TrainOptions options = train::train_options(config);
  const fs::path tokenizer_path = config.get<std::string>("data.tokenizer");
  if (tokenizer_path.empty()) throw Error("data.tokenizer: no tokenizer given (make one with `strata tokenizer train`)");
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(tokenizer_path);
  const models::ModelConfig m = model_config_for(config, *tokenizer, tokenizer_path.string());
  if (!request.architecture.empty() && m.architecture != request.architecture)
    throw Error("model.architecture: this command trains " + request.architecture + " models, the config says " +
                m.architecture);
  const Architecture& architecture = find_architecture(m.architecture);
  const fs::path& run_dir = request.out;
  if (lead && !request.resume && fs::exists(run_dir / "checkpoints"))
    throw Error(run_dir.string() + " already holds a run: pass --resume to continue it, or choose another --out");

  torch::manual_seed(options.seed);  // initial weights
  const train::DataOptions data = train::data_options(config);
  if (data.train.empty()) throw Error("data.train: no training set given");
  const bool quiet = request.quiet || !lead;
  std::unique_ptr<train::TrainTask> task = architecture.make_task(
      architecture.build(m), {config, m, *tokenizer, data.train, data.valid, quiet});
  const std::string base = config.get<std::string>("train.base_model");
  if (!base.empty() && !request.resume) {  // a resumed run's checkpoint holds the weights already
    const std::string loaded = train::describe(train::load_base_weights(
        task->model(), m, base, architecture.base_architectures, config.get<std::vector<std::string>>("train.base_exclude")));
    if (lead) std::printf("%s\n", loaded.c_str());
  }
  std::vector<std::string> train_only = options.train_only;
  if (const auto adapter = apply_adapter(config, task->model())) {
    const std::string name = config.get<std::string>("adapter.name");
    if (!lead) {
      // rank 0 says it
    } else if (adapter->modules.empty()) {
      std::printf("adapter: %s, built into the model (%lld parameters)\n", name.c_str(),
                  static_cast<long long>(adapter->parameters));
    } else {
      std::printf("adapter: %s on %zu linear maps (%lld new parameters)\n", name.c_str(), adapter->modules.size(),
                  static_cast<long long>(adapter->parameters));
    }
    // The adapter trains, and whatever train.train_only adds (a new classification head).
    for (std::string& pattern : nn::adapter_patterns(task->model())) train_only.push_back(std::move(pattern));
  }
  std::vector<std::string> frozen = train::freeze(task->model(), options.freeze);
  for (std::string& name : train::train_only(task->model(), train_only)) frozen.push_back(std::move(name));
  if (lead) {
    print_parameters(task->model(), frozen);
    if (group) std::printf("data-parallel: %d processes\n", group->size());
    fs::create_directories(run_dir);
    write_file_atomic(run_dir / "config.toml", config.to_toml());
  }
  train::RunInfo run{run_dir, m.to_json(), config.to_json(), tokenizer_path, request.resume, quiet, group.get()};
  const train::TrainResult result = train::run_training(*task, options, run);
  if (!lead) return result;
  std::printf("stopped after %lld steps (%s); last checkpoint %s\n", static_cast<long long>(result.steps),
              result.stop_reason.c_str(), result.last_checkpoint.string().c_str());
  if (result.best_metric)
    std::printf("best %s %.4f at step %lld\n", options.metric.c_str(), *result.best_metric,
                static_cast<long long>(*result.best_step));
  std::printf("metrics: %s (draw them with `strata plot %s`)\n", (run_dir / "metrics.jsonl").string().c_str(),
              run_dir.string().c_str());
  if (m.prefix_length > 0 || m.pal_size > 0 || !config.get<std::string>("adapter.name").empty())
    write_adapter(run_dir, base);
  return result;
}

}  // namespace strata::recipes
