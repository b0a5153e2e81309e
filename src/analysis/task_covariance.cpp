#include "strata/analysis/task_covariance.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/data/multitask_examples.h"
#include "strata/models/ca_mtl.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/loaded_model.h"

namespace strata::analysis {

namespace {

// A_i = U_i D_i^½ over the leading eigenpairs of XᵀX that cover `coverage` of its spectrum.
at::Tensor scaled_basis(const at::Tensor& x, double coverage, std::int64_t& rank) {
  const at::Tensor x64 = x.to(torch::kFloat64);
  const auto [values, vectors] = torch::linalg::eigh(x64.t().mm(x64), "L");  // ascending
  const at::Tensor descending = values.clamp_min(0).flip(0);
  const at::Tensor covered = descending.cumsum(0) / descending.sum().clamp_min(1e-300);
  rank = std::min<std::int64_t>(covered.lt(coverage).sum().item<std::int64_t>() + 1, descending.numel());
  return vectors.flip(1).narrow(1, 0, rank) * descending.narrow(0, 0, rank).sqrt().unsqueeze(0);
}

}  // namespace

CovarianceSimilarity covariance_similarity(const std::vector<at::Tensor>& inputs, double coverage) {
  if (inputs.size() < 2) throw Error("CovSim: needs at least 2 tasks, got " + std::to_string(inputs.size()));
  const auto width = inputs[0].size(1);
  CovarianceSimilarity out;
  std::vector<at::Tensor> bases;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dim() != 2 || inputs[i].size(0) == 0 || inputs[i].size(1) != width)
      throw Error("CovSim: task " + std::to_string(i) + "'s inputs must be [m > 0, " + std::to_string(width) + "]");
    std::int64_t rank = 0;
    bases.push_back(scaled_basis(inputs[i], coverage, rank));
    out.ranks.push_back(rank);
  }
  const std::size_t tasks = inputs.size();
  out.pairs.assign(tasks, std::vector<double>(tasks, 1.0));
  for (std::size_t i = 0; i < tasks; ++i)
    for (std::size_t j = i + 1; j < tasks; ++j) {
      const double value = (bases[i].t().mm(bases[j]).norm() / (bases[i].norm() * bases[j].norm())).item<double>();
      out.pairs[i][j] = out.pairs[j][i] = value;
    }
  for (std::size_t i = 0; i < tasks; ++i) {
    double total = 0;
    for (std::size_t j = 0; j < tasks; ++j)
      if (j != i) total += out.pairs[i][j];
    out.per_task.push_back(total / static_cast<double>(tasks - 1));
    out.mean += out.per_task.back() / static_cast<double>(tasks);
  }
  return out;
}

nlohmann::ordered_json task_covariance_report(const std::filesystem::path& model_path, std::filesystem::path suite,
                                              const std::string& split, std::size_t examples) {
  recipes::LoadOptions options;
  options.architecture = "ca_mtl";
  recipes::LoadedModel info = recipes::load_model(model_path, options);
  models::CaMtlModel model = recipes::model_as<models::CaMtlModel>(info.module, "ca_mtl");
  if (suite.empty()) suite = info.run.get<std::string>("data.valid");
  std::vector<std::string> names;
  for (const models::TaskHead& head : model->tasks()) names.push_back(head.name);
  const std::vector<SuiteTask> tasks = read_suite_tasks(suite, names);
  const std::vector<MultitaskExample> all =
      load_multitask_examples(suite, split, tasks, *info.tokenizer, static_cast<std::size_t>(info.config.max_positions));

  const std::int64_t length = info.config.max_positions;
  std::vector<std::vector<at::Tensor>> rows(tasks.size());
  std::vector<std::size_t> taken(tasks.size(), 0);
  torch::NoGradGuard no_grad;
  for (const MultitaskExample& e : all) {
    if (taken[e.task]++ >= examples) continue;
    at::Tensor ids = torch::full({1, length}, info.config.pad_id, torch::kInt64);
    at::Tensor padding = torch::zeros({1, length}, torch::kBool);
    const auto n = static_cast<std::int64_t>(e.ids.size());
    ids.narrow(1, 0, n).copy_(torch::tensor(std::vector<std::int64_t>(e.ids.begin(), e.ids.end())).unsqueeze(0));
    padding.narrow(1, 0, n).fill_(true);
    at::Tensor first_layer;
    model->encode(ids, padding, torch::tensor({static_cast<std::int64_t>(e.task)}), &first_layer);
    rows[e.task].push_back(first_layer[0].narrow(0, 0, n));
  }
  std::vector<at::Tensor> inputs;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (rows[t].empty()) throw Error(suite.string() + ": no " + split + " examples of task " + tasks[t].name);
    inputs.push_back(torch::cat(rows[t]));
  }
  const CovarianceSimilarity similarity = covariance_similarity(inputs);
  nlohmann::ordered_json out{{"model", info.checkpoint.string()}, {"split", split}, {"examples", examples}};
  nlohmann::ordered_json per_task = nlohmann::ordered_json::object();
  for (std::size_t t = 0; t < tasks.size(); ++t)
    per_task[tasks[t].name] = {{"covsim", similarity.per_task[t]}, {"rank", similarity.ranks[t]}};
  out["tasks"] = per_task;
  out["mean"] = similarity.mean;
  out["pairs"] = similarity.pairs;
  return out;
}

}  // namespace strata::analysis
