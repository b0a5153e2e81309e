// strata mtl eval: a trained ca_mtl model scored on a split of its multi-task suite.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "strata/core/files.h"
#include "strata/recipes/multitask_evaluation.h"

namespace strata::cli {

namespace {

struct EvalFlags {
  std::string model, suite, split = "test", predictions, json;
  std::size_t limit = 0;
};

void run_eval(const EvalFlags& flags) {
  const recipes::MultitaskEvaluation result =
      recipes::evaluate_multitask(flags.model, flags.suite, flags.split, flags.limit);
  std::printf("%-24s %-9s %9s %s\n", "task", "metric", "examples", "value");
  for (const auto& [name, task] : result.summary.at("tasks").items())
    std::printf("%-24s %-9s %9zu %.4f\n", name.c_str(), task.at("metric").get<std::string>().c_str(),
                task.at("examples").get<std::size_t>(), task.at("value").get<double>());
  std::printf("%-24s %-9s %9s %.4f\n", "score (mean)", "", "", result.summary.at("score").get<double>());
  if (!flags.predictions.empty()) {
    AtomicFile file(flags.predictions);
    for (const auto& line : result.predictions) file.stream() << line.dump() << '\n';
    file.commit();
    std::printf("predictions: %s (%zu examples)\n", flags.predictions.c_str(), result.predictions.size());
  }
  if (!flags.json.empty()) write_file_atomic(flags.json, result.summary.dump(2) + "\n");
}

}  // namespace

void register_mtl(CLI::App& app) {
  CLI::App* mtl = app.add_subcommand("mtl", "Multi-task models (CA-MTL, thesis ch. 3)");
  mtl->require_subcommand(1);
  CLI::App* eval = mtl->add_subcommand(
      "eval", "Score a ca_mtl model on a split of a multi-task suite: each task's metric and their mean");
  auto flags = std::make_shared<EvalFlags>();
  eval->add_option("--model", flags->model, "a ca_mtl run or checkpoint directory")->required();
  eval->add_option("--suite", flags->suite, "the suite directory (default: the run's data.valid)");
  eval->add_option("--split", flags->split, "train, validation or test")->capture_default_str();
  eval->add_option("--limit", flags->limit, "at most this many examples of each task; 0 = all")->capture_default_str();
  eval->add_option("--predictions", flags->predictions,
                   "write each example's gold and predicted label here (JSONL), for paired bootstraps");
  eval->add_option("--json", flags->json, "write the scores here as JSON");
  on_run(eval, [flags] { run_eval(*flags); });
}

}  // namespace strata::cli
