#include "strata/recipes/multitask_evaluation.h"

#include <torch/torch.h>

#include <limits>

#include "strata/core/error.h"
#include "strata/data/multitask_examples.h"
#include "strata/models/ca_mtl.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/multitask_task.h"

namespace strata::recipes {

MultitaskEvaluation evaluate_multitask(const std::filesystem::path& model_path, std::filesystem::path suite,
                                       const std::string& split, std::size_t per_task) {
  LoadOptions options;
  options.architecture = "ca_mtl";
  LoadedModel info = load_model(model_path, options);
  models::CaMtlModel model = model_as<models::CaMtlModel>(info.module, "ca_mtl");
  if (suite.empty()) suite = info.run.get<std::string>("data.valid");
  if (suite.empty()) throw Error("--suite: the model's run had no data.valid; name the suite directory");
  std::vector<std::string> names;
  for (const models::TaskHead& head : model->tasks()) names.push_back(head.name);
  const std::vector<SuiteTask> tasks = read_suite_tasks(suite, names);
  for (std::size_t t = 0; t < tasks.size(); ++t)
    if (tasks[t].classes() != model->tasks()[t].classes)
      throw Error((suite / "tasks.json").string() + ": task " + tasks[t].name + " has " +
                  std::to_string(tasks[t].classes()) + " classes, the model's head " +
                  std::to_string(model->tasks()[t].classes));
  const std::vector<MultitaskExample> examples =
      load_multitask_examples(suite, split, tasks, *info.tokenizer, static_cast<std::size_t>(info.config.max_positions));
  if (examples.empty()) throw Error(suite.string() + ": no " + split + " examples of the model's tasks");

  std::vector<train::TaskPredictions> predictions;
  {
    torch::NoGradGuard no_grad;
    predictions = train::predict_tasks(model, tasks, examples,
                                       per_task == 0 ? std::numeric_limits<std::size_t>::max() : per_task);
  }
  MultitaskEvaluation out;
  out.summary = {{"model", info.checkpoint.string()}, {"suite", suite.string()}, {"split", split}};
  nlohmann::ordered_json scores = nlohmann::ordered_json::object();
  double total = 0;
  std::size_t scored = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const train::TaskPredictions& p = predictions[t];
    const std::size_t count = tasks[t].regression ? p.targets.size() : p.gold.size();
    if (count == 0) continue;
    const double value = train::task_score(tasks[t], p);
    scores[tasks[t].name] = {{"metric", tasks[t].metric}, {"value", value}, {"examples", count}};
    total += value;
    ++scored;
    for (std::size_t i = 0; i < count; ++i) {
      nlohmann::ordered_json line{{"task", tasks[t].name}, {"index", i}};
      if (tasks[t].regression) {
        line["gold"] = p.targets[i];
        line["predicted"] = p.values[i];
      } else {
        line["gold"] = tasks[t].labels[static_cast<std::size_t>(p.gold[i])];
        line["predicted"] = tasks[t].labels[static_cast<std::size_t>(p.predicted[i])];
      }
      out.predictions.push_back(std::move(line));
    }
  }
  out.summary["tasks"] = scores;
  out.summary["score"] = total / static_cast<double>(scored);
  return out;
}

}  // namespace strata::recipes
