#include "strata/analysis/attention_agreement.h"

#include <torch/torch.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/global_relevance.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/data/token_batches.h"
#include "strata/recipes/loaded_model.h"

#include "analysis_output.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string shape_text(const at::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

// A model loaded for the analysis: its task (which makes its batches), its encoder's
// self-attention modules, and their recording (which refers to `layers`: an Analysed stays
// where it was made).
struct Analysed {
  Analysed(const std::string& model, const std::string& data, bool quiet)
      : name(model), loaded(recipes::load_trained_task(model, data, quiet)) {
    source = dynamic_cast<AnalysisBatchSource*>(loaded.task.get());
    if (source == nullptr)
      throw Error(fmt::format("model {}: its kind of training task cannot hand its batches to the attention "
                              "analyses", model));
    layers = encoder_self_attention(loaded.task->model());
    recording = std::make_unique<AttentionRecording>(loaded.task->model(), layers);
  }
  Analysed(const Analysed&) = delete;
  Analysed& operator=(const Analysed&) = delete;

  std::string name;
  recipes::TrainedTask loaded;
  AnalysisBatchSource* source = nullptr;
  std::vector<NamedAttention> layers;
  std::unique_ptr<AttentionRecording> recording;
};

void check_same_shape(const Analysed& first, const Analysed& other) {
  if (other.layers.size() != first.layers.size())
    throw Error(fmt::format("models {} and {} differ in encoder layers ({} and {}): their heads cannot be paired",
                            first.name, other.name, first.layers.size(), other.layers.size()));
  for (std::size_t l = 0; l < first.layers.size(); ++l)
    if (other.layers[l].module->heads() != first.layers[l].module->heads())
      throw Error(fmt::format("models {} and {} differ in the heads of {} ({} and {})", first.name, other.name,
                              first.layers[l].name, first.layers[l].module->heads(), other.layers[l].module->heads()));
}

}  // namespace

at::Tensor attention_jsd_sums(const at::Tensor& a, const at::Tensor& b, const at::Tensor& lengths) {
  if (a.dim() != 4 || a.size(2) != a.size(3) || !a.sizes().equals(b.sizes()))
    throw Error("attention agreement: weights must both be [B, H, L, L], got " + shape_text(a) + " and " +
                shape_text(b));
  if (lengths.dim() != 1 || lengths.size(0) != a.size(0))
    throw Error("attention agreement: lengths " + shape_text(lengths) + " for a batch of " +
                std::to_string(a.size(0)));
  const at::Tensor p = a.to(torch::kDouble), q = b.to(torch::kDouble);
  const at::Tensor real_lengths = lengths.to(a.device(), torch::kLong);
  const at::Tensor real = torch::arange(a.size(2), real_lengths.options()).unsqueeze(0) < real_lengths.unsqueeze(1);
  const at::Tensor keys = real.unsqueeze(1).unsqueeze(2);  // [B, 1, 1, L]
  const at::Tensor pk = p.masked_fill(keys.logical_not(), 0), qk = q.masked_fill(keys.logical_not(), 0);
  const at::Tensor m = (pk + qk) / 2;
  // JSD = (KL(p || m) + KL(q || m)) / 2; xlogy(0, ·) = 0, and m > 0 wherever p or q is.
  const at::Tensor rows =
      ((torch::xlogy(pk, pk) - torch::xlogy(pk, m)) + (torch::xlogy(qk, qk) - torch::xlogy(qk, m))).sum(-1) / 2;
  const at::Tensor per_query = rows.masked_fill(real.unsqueeze(1).logical_not(), 0);  // [B, H, L]
  return per_query.sum(-1) / real_lengths.clamp_min(1).to(torch::kDouble).unsqueeze(1);
}

void run_agreement_analysis(const AgreementOptions& options) {
  if (options.models.size() < 2)
    throw Error(fmt::format("--model: agreement compares two or more models, {} given", options.models.size()));
  std::vector<std::unique_ptr<Analysed>> models;
  for (const std::string& model : options.models) {
    models.push_back(std::make_unique<Analysed>(model, options.data, options.quiet));
    check_same_shape(*models.front(), *models.back());
  }
  const std::vector<std::size_t>& costs = models.front()->loaded.task->costs(train::Split::Valid);
  const std::size_t examples = options.max_examples > 0 ? std::min(options.max_examples, costs.size()) : costs.size();
  if (examples == 0) throw Error(options.data + ": no validation examples to compare the models on");
  const std::size_t layers = models.front()->layers.size();

  struct Pair {
    std::size_t a, b;
    std::vector<at::Tensor> totals;  // per layer, [H] double: Σ over examples
  };
  std::vector<Pair> pairs;
  for (std::size_t i = 0; i < models.size(); ++i)
    for (std::size_t j = i + 1; j < models.size(); ++j) {
      Pair pair{i, j, {}};
      for (const NamedAttention& layer : models.front()->layers)
        pair.totals.push_back(torch::zeros({layer.module->heads()}, torch::kDouble));
      pairs.push_back(std::move(pair));
    }

  Progress progress("attention agreement", examples, "examples", options.quiet);
  torch::NoGradGuard no_grad;
  for (const std::vector<std::size_t>& rows : plan_batches_in_order(std::span(costs).first(examples), options.max_tokens)) {
    at::Tensor ids, lengths;
    for (const auto& m : models) {
      m->recording->restart();
      const AnalysisBatch batch = m->source->analysis_batch(train::Split::Valid, rows);
      if (!ids.defined()) {
        ids = batch.ids;
        lengths = batch.padding.to(torch::kBool).sum(1);
      } else if (!batch.ids.sizes().equals(ids.sizes()) || !torch::equal(batch.ids, ids)) {
        throw Error(fmt::format("models {} and {} read different tokens for the same examples of {} (were they "
                                "trained with one tokenizer?)",
                                models.front()->name, m->name, options.data));
      }
      batch.forward();
    }
    for (Pair& pair : pairs)
      for (std::size_t l = 0; l < layers; ++l)
        pair.totals[l] += attention_jsd_sums(models[pair.a]->layers[l].module->recorded_weights(),
                                             models[pair.b]->layers[l].module->recorded_weights(), lengths)
                              .sum(0)
                              .cpu();
    progress.add(rows.size());
  }
  progress.finish();

  Json report;
  report["models"] = Json::array();
  for (const auto& m : models) report["models"].push_back(m->loaded.checkpoint.string());
  report["data"] = options.data;
  report["examples"] = examples;
  report["layers"] = Json::array();
  for (const NamedAttention& layer : models.front()->layers) report["layers"].push_back(layer.name);
  report["pairs"] = Json::array();
  double overall = 0;
  fmt::print("attention agreement over {} validation examples: Jensen-Shannon divergence (nats, 0 = the same, "
             "at most ln 2 = 0.693) between the models' encoder self-attention rows, per head\n",
             examples);
  for (const Pair& pair : pairs) {
    Json matrix = Json::array();
    double sum = 0;
    std::size_t heads = 0;
    fmt::print("\n{}\n  vs {}\n", models[pair.a]->name, models[pair.b]->name);
    for (std::size_t l = 0; l < layers; ++l) {
      const at::Tensor mean = pair.totals[l] / static_cast<double>(examples);
      std::vector<double> row(mean.data_ptr<double>(), mean.data_ptr<double>() + mean.numel());
      for (const double v : row) sum += v;
      heads += row.size();
      fmt::print("  {:<28} {:.4f}\n", models.front()->layers[l].name, fmt::join(row, " "));
      matrix.push_back(row);
    }
    const double mean = sum / static_cast<double>(heads);
    fmt::print("  mean {:.4f}\n", mean);
    overall += mean;
    report["pairs"].push_back({{"a", models[pair.a]->name}, {"b", models[pair.b]->name}, {"mean", mean},
                               {"matrix", matrix}});
  }
  report["mean"] = overall / static_cast<double>(pairs.size());
  fmt::print("\nmean over {} pair{}: {:.4f}\n", pairs.size(), pairs.size() == 1 ? "" : "s",
             report["mean"].get<double>());
  const fs::path out = output_dir(options.out, options.models.front(), "agreement");
  write_file_atomic(out / "agreement.json", report.dump(2) + "\n");
  fmt::print("wrote {}\n", (out / "agreement.json").string());
}

}  // namespace strata::analysis
