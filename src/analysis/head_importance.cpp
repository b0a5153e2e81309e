#include "strata/analysis/head_importance.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/data/token_batches.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/train/task.h"

namespace strata::analysis {

namespace {

using Attention = nn::MultiHeadAttentionImpl;

// Restores the model's training mode on every way out.
class EvalModeScope {
 public:
  explicit EvalModeScope(torch::nn::Module& model) : model_(model), was_training_(model.is_training()) {
    model_.eval();
  }
  ~EvalModeScope() { model_.train(was_training_); }
  EvalModeScope(const EvalModeScope&) = delete;
  EvalModeScope& operator=(const EvalModeScope&) = delete;

 private:
  torch::nn::Module& model_;
  bool was_training_;
};

// Removes the head gates on every way out.
class GateScope {
 public:
  explicit GateScope(const std::vector<NamedAttention>& layers) : layers_(layers) {}
  ~GateScope() {
    for (const NamedAttention& layer : layers_) layer.module->set_head_gate(at::Tensor());
  }
  GateScope(const GateScope&) = delete;
  GateScope& operator=(const GateScope&) = delete;

 private:
  const std::vector<NamedAttention>& layers_;
};

// The validation examples to read (the first max_examples) in batches of consecutive rows.
BatchPlan validation_batches(const train::TrainTask& task, const ImportanceOptions& options, std::size_t& examples) {
  const std::vector<std::size_t>& costs = task.costs(train::Split::Valid);
  examples = options.max_examples > 0 ? std::min(options.max_examples, costs.size()) : costs.size();
  if (examples == 0) throw Error("head importance: the task has no validation examples (give validation data)");
  return plan_batches_in_order(std::span(costs.data(), examples), options.max_tokens);
}

// The summed loss of one batch, checked to depend on something trainable.
train::BatchLoss batch_loss(train::TrainTask& task, const std::vector<std::size_t>& rows) {
  train::BatchLoss loss = task.loss(train::Split::Valid, rows, /*label_smoothing=*/0.0);
  if (!loss.loss_sum.requires_grad())
    throw Error("head importance: the validation loss does not depend on any trainable parameter "
                "(are all parameters frozen?)");
  return loss;
}

// The head-owned slices of one module's projections, each [H] after summing G ⊙ θ over the
// head's dims: q/k/v rows (weight and bias) and out_proj's columns.
std::vector<at::Tensor> head_parameters(Attention& a) {
  std::vector<at::Tensor> params;
  for (nn::AdaptableLinear* linear : {&a.q_proj, &a.k_proj, &a.v_proj}) {
    params.push_back((*linear)->weight);
    if ((*linear)->bias.defined()) params.push_back((*linear)->bias);
  }
  params.push_back(a.out_proj->weight);
  return params;
}

// Σ G ⊙ θ per head for the module's parameters as head_parameters() lists them.
at::Tensor taylor_products(Attention& a, const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads) {
  const std::int64_t heads = a.heads();
  at::Tensor total = torch::zeros({heads}, torch::kDouble);
  const at::Tensor& out_weight = a.out_proj->weight;
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!grads[i].defined()) continue;
    const at::Tensor product = grads[i].to(torch::kDouble) * params[i].detach().to(torch::kDouble);
    // out_proj.weight [d, d_inner]: a head owns columns; every other tensor: rows (dim 0).
    const bool columns = params[i].is_same(out_weight);
    const at::Tensor per_dim = product.dim() == 1 ? product : product.sum(columns ? 0 : 1);
    total += per_dim.view({heads, -1}).sum(1);
  }
  return total;
}

HeadMatrix to_matrix(const std::vector<at::Tensor>& rows) {
  HeadMatrix matrix;
  for (const at::Tensor& row : rows) {
    const at::Tensor r = row.to(torch::kDouble).contiguous();
    matrix.emplace_back(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
  }
  return matrix;
}

void normalize_layers(HeadMatrix& matrix) {
  for (std::vector<double>& row : matrix) {
    double norm = 0;
    for (const double v : row) norm += v * v;
    norm = std::sqrt(norm);
    if (norm > 0)
      for (double& v : row) v /= norm;
  }
}

}  // namespace

std::vector<NamedAttention> attention_modules(torch::nn::Module& model) {
  std::vector<NamedAttention> out;
  for (const auto& item : model.named_modules()) {
    if (auto attention = std::dynamic_pointer_cast<Attention>(item.value())) out.push_back({item.key(), attention});
  }
  return out;
}

std::vector<RankedHead> top_heads(const HeadMatrix& matrix, std::size_t k) {
  std::vector<RankedHead> all;
  for (std::size_t layer = 0; layer < matrix.size(); ++layer)
    for (std::size_t h = 0; h < matrix[layer].size(); ++h)
      all.push_back({layer, static_cast<std::int64_t>(h), matrix[layer][h]});
  // Stable: equal values keep layer-then-head order.
  std::stable_sort(all.begin(), all.end(), [](const RankedHead& a, const RankedHead& b) { return a.value > b.value; });
  if (all.size() > k) all.resize(k);
  return all;
}

std::string_view importance_method_name(ImportanceMethod method) {
  return method == ImportanceMethod::Taylor ? "taylor" : "head_mask";
}

ImportanceMethod importance_method_from_name(std::string_view name) {
  if (name == "taylor") return ImportanceMethod::Taylor;
  if (name == "head_mask") return ImportanceMethod::HeadMask;
  throw Error(std::string("unknown head importance method '") + std::string(name) + "' (known: taylor, head_mask)");
}

std::string_view normalization_name(ImportanceNormalization normalization) {
  return normalization == ImportanceNormalization::Layer ? "layer" : "none";
}

ImportanceNormalization normalization_from_name(std::string_view name) {
  if (name == "layer") return ImportanceNormalization::Layer;
  if (name == "none") return ImportanceNormalization::None;
  throw Error(std::string("unknown importance normalisation '") + std::string(name) + "' (known: layer, none)");
}

HeadImportance head_importance(train::TrainTask& task, const ImportanceOptions& options) {
  torch::nn::Module& model = task.model();
  HeadImportance result;
  result.method = options.method;
  result.normalize = options.normalize;
  const std::vector<NamedAttention> layers = attention_modules(model);
  if (layers.empty()) throw Error("head importance: the model has no multi-head attention module");
  for (const NamedAttention& layer : layers) result.layers.push_back(layer.name);

  std::size_t examples = 0;
  const BatchPlan batches = validation_batches(task, options, examples);
  EvalModeScope eval(model);
  torch::AutoGradMode grad_mode(true);

  // Per layer: the accumulated gradients of its head parameters (taylor) or |∂L/∂gate| (head_mask).
  std::vector<std::vector<at::Tensor>> params(layers.size()), grad_sums(layers.size());
  std::vector<at::Tensor> gate_sums;
  std::optional<GateScope> remove_gates;
  if (options.method == ImportanceMethod::HeadMask) remove_gates.emplace(layers);
  std::vector<at::Tensor> inputs;  // what autograd::grad differentiates, flattened over layers
  for (std::size_t l = 0; l < layers.size(); ++l) {
    Attention& a = *layers[l].module;
    if (options.method == ImportanceMethod::Taylor) {
      params[l] = head_parameters(a);
      for (const at::Tensor& p : params[l]) {
        if (!p.requires_grad())
          throw Error(std::string("head importance (taylor): ") + layers[l].name +
                      " is frozen; its heads' parameters need gradients");
        inputs.push_back(p);
        grad_sums[l].push_back(torch::zeros_like(p));
      }
    } else {
      const at::Tensor gate = torch::ones({a.heads()}, a.q_proj->weight.options()).requires_grad_(true);
      a.set_head_gate(gate);
      gate_sums.push_back(torch::zeros({a.heads()}, torch::kDouble));
      inputs.push_back(gate);
    }
  }

  std::int64_t labels = 0;
  for (const std::vector<std::size_t>& rows : batches) {
    const train::BatchLoss loss = batch_loss(task, rows);
    labels += loss.labels;
    const std::vector<at::Tensor> grads =
        torch::autograd::grad({loss.loss_sum}, inputs, /*grad_outputs=*/{}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    std::size_t next = 0;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      if (options.method == ImportanceMethod::Taylor) {
        for (at::Tensor& sum : grad_sums[l]) {
          if (grads[next].defined()) sum += grads[next].detach();
          ++next;
        }
      } else {
        if (grads[next].defined()) gate_sums[l] += grads[next].detach().abs().to(torch::kDouble);
        ++next;
      }
    }
    if (options.progress) options.progress->add(rows.size());
  }
  if (labels <= 0) throw Error("head importance: the validation examples carry no label");

  std::vector<at::Tensor> rows;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    if (options.method == ImportanceMethod::Taylor) {
      // G is the gradient of the mean loss: the summed gradients over the label count.
      std::vector<at::Tensor> mean_grads;
      for (const at::Tensor& sum : grad_sums[l]) mean_grads.push_back(sum / static_cast<double>(labels));
      rows.push_back(taylor_products(*layers[l].module, params[l], mean_grads).abs());
    } else {
      rows.push_back(gate_sums[l] / static_cast<double>(labels));
    }
  }
  result.scores = to_matrix(rows);
  if (options.normalize == ImportanceNormalization::Layer) normalize_layers(result.scores);
  result.examples = static_cast<std::int64_t>(examples);
  result.labels = labels;
  return result;
}

nlohmann::ordered_json to_json(const HeadImportance& importance) {
  nlohmann::ordered_json heads = nlohmann::ordered_json::array(), top = nlohmann::ordered_json::array();
  for (const std::vector<double>& row : importance.scores) {
    heads.push_back(row.size());
    top.push_back(row.empty() ? std::ptrdiff_t{-1} : std::max_element(row.begin(), row.end()) - row.begin());
  }
  return {{"method", std::string(importance_method_name(importance.method))},
          {"normalize", std::string(normalization_name(importance.normalize))},
          {"examples", importance.examples},
          {"labels", importance.labels},
          {"layers", importance.layers},
          {"heads", heads},
          {"scores", importance.scores},
          {"top_head_per_layer", top}};
}

}  // namespace strata::analysis
