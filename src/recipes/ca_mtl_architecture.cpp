// ca_mtl: CA-MTL (thesis ch. 3), a BERT-like encoder conditioned on the task, trained on a
// multi-task suite (data.train and data.valid name the suite directory of `strata data
// debian` or `strata data glue`; training reads its train split, validation its validation
// split) with a task sampler (mtl.sampler). It starts from a masked-LM-pretrained encoder
// (`strata pretrain` of an encoder model) through train.base_model.
#include <torch/torch.h>

#include "builtin_architectures.h"
#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/data/multitask_examples.h"
#include "strata/models/ca_mtl.h"
#include "strata/nn/safetensors_torch.h"
#include "strata/train/checkpoint.h"
#include "strata/train/multitask_task.h"

namespace strata::recipes {

namespace {

std::vector<std::string> chosen_tasks(const Config& run) { return split_list(run.get<std::string>("mtl.tasks")); }

std::vector<SuiteTask> suite_tasks(const Config& run) {
  const std::string suite = run.get<std::string>("data.train");
  if (suite.empty()) throw Error("data.train: ca_mtl needs a suite directory (`strata data debian` writes one)");
  return read_suite_tasks(suite, chosen_tasks(run));
}

void complete_config(models::ModelConfig& config, const Config& run) {
  if (!config.tasks.empty()) return;
  std::vector<models::TaskHead> heads;
  for (const SuiteTask& task : suite_tasks(run)) heads.push_back({task.name, task.classes()});
  config.tasks = models::format_task_heads(heads);
}

// mtl.new_task_embedding = TASK: each task the base model lacks starts from the base's TASK
// embedding (the base's shared tensors load afterwards, by name, and leave these alone).
void init_new_task_embeddings(models::CaMtlModel& model, const Config& run) {
  const std::string from = run.get<std::string>("mtl.new_task_embedding");
  if (from.empty() || from == "random") return;
  const std::string base = run.get<std::string>("train.base_model");
  if (base.empty()) throw Error("mtl.new_task_embedding: copies a task embedding of train.base_model, which is not set");
  const std::filesystem::path file = train::resolve_checkpoint(base) / "model.safetensors";
  const std::map<std::string, at::Tensor> weights = load_tensors(file);
  const auto source = weights.find("task_embeddings." + from);
  if (source == weights.end()) {
    std::string known;
    for (const auto& [name, tensor] : weights)
      if (name.starts_with("task_embeddings.")) known += (known.empty() ? "" : ", ") + name.substr(16);
    throw Error("mtl.new_task_embedding: " + file.string() + " has no task '" + from + "' (its tasks: " + known + ")");
  }
  torch::NoGradGuard no_grad;
  for (std::size_t t = 0; t < model->tasks().size(); ++t)
    if (!weights.contains("task_embeddings." + model->tasks()[t].name))
      model->task_embedding(static_cast<std::int64_t>(t)).copy_(source->second);
}

std::unique_ptr<train::TrainTask> make_task(std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) {
  reject_denoising(in, "ca_mtl");
  models::CaMtlModel model = model_as<models::CaMtlModel>(module, "ca_mtl");
  init_new_task_embeddings(model, in.run);
  const std::vector<SuiteTask> tasks = suite_tasks(in.run);
  const auto length = static_cast<std::size_t>(in.model.max_positions);
  auto load = [&](const std::filesystem::path& suite, const char* split) {
    return suite.empty() ? std::vector<MultitaskExample>{}
                         : load_multitask_examples(suite, split, tasks, in.tokenizer, length);
  };
  const train::DataOptions data = train::data_options(in.run);
  std::vector<MultitaskExample> train_set = keep_fraction(load(in.train, "train"), data);
  std::vector<MultitaskExample> valid_set = load(in.valid, "validation");
  std::printf("data: %zu training and %zu validation examples of %zu tasks (multi-task)\n", train_set.size(),
              valid_set.size(), tasks.size());
  train::MultitaskOptions options;
  options.sampler = task_sampler_from_name(in.run.get<std::string>("mtl.sampler"));
  options.temperature_alpha = in.run.get<double>("mtl.temperature_alpha");
  const auto batch = in.run.get<std::int64_t>("mtl.batch_size");
  if (batch <= 0) throw Error("mtl.batch_size: must be positive, got " + std::to_string(batch));
  options.batch_size = static_cast<std::size_t>(batch);
  options.seed = static_cast<std::uint64_t>(in.run.get<std::int64_t>("train.seed"));
  return std::make_unique<train::MultitaskTask>(model, tasks, std::move(train_set), std::move(valid_set), options);
}

}  // namespace

Architecture ca_mtl_architecture() {
  Architecture a{"ca_mtl",
                 "CA-MTL (thesis ch. 3): a task-conditioned encoder learning a multi-task suite with MT-Uncertainty "
                 "sampling",
                 [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
                   return models::CaMtlModel(config).ptr();
                 },
                 make_task, nullptr};
  a.complete_config = complete_config;
  a.base_architectures = {"encoder"};
  return a;
}

}  // namespace strata::recipes
