// strata mtl eval | covsim: a trained ca_mtl model scored on a split of its multi-task suite,
// or its tasks' input covariance similarity (thesis Eq. 3.7).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "strata/analysis/task_covariance.h"
#include "strata/core/files.h"
#include "strata/recipes/multitask_evaluation.h"

namespace strata::cli {

namespace {

struct MtlEvalFlags {
  std::string model, suite, split = "test", predictions, json;
  std::size_t limit = 0;
};

void run_eval(const MtlEvalFlags& flags) {
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

struct CovsimFlags {
  std::string model, suite, split = "validation", json;
  std::size_t examples = 200;
};

void run_covsim(const CovsimFlags& flags) {
  const nlohmann::ordered_json report =
      analysis::task_covariance_report(flags.model, flags.suite, flags.split, flags.examples);
  std::printf("%-24s %7s %5s\n", "task", "CovSim", "rank");
  for (const auto& [name, task] : report.at("tasks").items())
    std::printf("%-24s %7.4f %5lld\n", name.c_str(), task.at("covsim").get<double>(),
                static_cast<long long>(task.at("rank").get<std::int64_t>()));
  std::printf("%-24s %7.4f\n", "mean", report.at("mean").get<double>());
  if (!flags.json.empty()) write_file_atomic(flags.json, report.dump(2) + "\n");
}

}  // namespace

void register_mtl(CLI::App& app) {
  CLI::App* mtl = app.add_subcommand("mtl", "Multi-task models (CA-MTL, thesis ch. 3)");
  mtl->require_subcommand(1);
  CLI::App* eval = mtl->add_subcommand(
      "eval", "Score a ca_mtl model on a split of a multi-task suite: each task's metric and their mean");
  auto flags = std::make_shared<MtlEvalFlags>();
  eval->add_option("--model", flags->model, "a ca_mtl run or checkpoint directory")->required();
  eval->add_option("--suite", flags->suite, "the suite directory (default: the run's data.valid)");
  eval->add_option("--split", flags->split, "train, validation or test")->capture_default_str();
  eval->add_option("--limit", flags->limit, "at most this many examples of each task; 0 = all")->capture_default_str();
  eval->add_option("--predictions", flags->predictions,
                   "write each example's gold and predicted label here (JSONL), for paired bootstraps");
  eval->add_option("--json", flags->json, "write the scores here as JSON");
  on_run(eval, [flags] { run_eval(*flags); });

  CLI::App* covsim = mtl->add_subcommand(
      "covsim", "CovSim (thesis Eq. 3.7): how alike the tasks' first-layer input covariances are, per task and on "
                "average (1 = the same directions with the same weights, 0 = orthogonal)");
  auto cov = std::make_shared<CovsimFlags>();
  covsim->add_option("--model", cov->model, "a ca_mtl run or checkpoint directory")->required();
  covsim->add_option("--suite", cov->suite, "the suite directory (default: the run's data.valid)");
  covsim->add_option("--split", cov->split, "train, validation or test")->capture_default_str();
  covsim->add_option("--examples", cov->examples, "examples of each task whose tokens are read")->capture_default_str();
  covsim->add_option("--json", cov->json, "write the report here as JSON (with the task-by-task matrix)");
  on_run(covsim, [cov] { run_covsim(*cov); });
}

}  // namespace strata::cli
