#include "strata/models/ca_mtl.h"

#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/models/model_layers.h"
#include "strata/models/prefix_settings.h"
#include "strata/nn/dropout.h"

namespace strata::models {

std::vector<TaskHead> parse_task_heads(const std::string& text) {
  std::vector<TaskHead> heads;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    const std::size_t colon = item.rfind(':');
    std::int64_t classes = 0;
    if (colon != std::string_view::npos && colon > 0) classes = parse_int64(item.substr(colon + 1)).value_or(0);
    if (classes <= 0)
      throw Error("model.tasks: '" + std::string(item) + "' is not name:classes (classes >= 1; 1 = regression)");
    TaskHead head{std::string(item.substr(0, colon)), classes};
    if (head.name.find('.') != std::string::npos)
      throw Error("model.tasks: task '" + head.name + "' has a '.', which parameter names cannot hold");
    for (const TaskHead& known : heads)
      if (known.name == head.name) throw Error("model.tasks: task '" + head.name + "' is listed twice");
    heads.push_back(std::move(head));
  }
  if (heads.empty()) throw Error("model.tasks: no tasks (a ca_mtl run fills them from its training suite)");
  return heads;
}

std::string format_task_heads(const std::vector<TaskHead>& heads) {
  std::string out;
  for (const TaskHead& h : heads) out += (out.empty() ? "" : ",") + h.name + ":" + std::to_string(h.classes);
  return out;
}

std::int64_t conditional_attention_blocks(const ModelConfig& config) {
  if (config.camtl_blocks < 0) throw Error("model.camtl_blocks: must be 0 (d_model / max_positions) or positive");
  if (config.camtl_blocks > 0) return config.camtl_blocks;
  if (config.d_model % config.max_positions != 0)
    throw Error("model.camtl_blocks: 0 takes N = d_model / max_positions (the thesis's N = d / L), but " +
                std::to_string(config.max_positions) + " does not divide " + std::to_string(config.d_model) +
                "; set camtl_blocks");
  return config.d_model / config.max_positions;
}

namespace {

// The encoder's stack options; the hard variant masks every head to its query's block.
nn::StackOptions encoder_options(const ModelConfig& config) {
  nn::StackOptions options = stack_options(config, Stack::Encoder);
  if (config.camtl_attention == "hard") {
    const std::int64_t blocks = conditional_attention_blocks(config);
    attn::LayerSpec spec;
    spec.heads[0].mask = attn::Mask::blocks((config.max_positions + blocks - 1) / blocks, 0);
    options.self_specs.assign(static_cast<std::size_t>(config.encoder_layers), spec);
  }
  return options;
}

}  // namespace

CaMtlModelImpl::CaMtlModelImpl(const ModelConfig& config) : config_(config), tasks_(parse_task_heads(config.tasks)) {
  check_stacks(config, "ca_mtl", {.encoder = true});
  if (config.pre_norm) throw Error("model.pre_norm: ca_mtl conditions BERT's post-LayerNorm encoder; set it false");
  if (!config.encoder_attention.empty())
    throw Error("model.encoder_attention: ca_mtl's attention is its conditional bias (model.camtl_attention)");
  const std::string& attention = config.camtl_attention;
  if (attention != "block" && attention != "full" && attention != "hard" && attention != "none")
    throw Error("model.camtl_attention: unknown '" + attention + "' (known: block, full, hard, none)");
  const std::int64_t d = config.d_model, layers = config.encoder_layers;

  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, d));
  encoder = register_module("encoder", nn::TransformerEncoder(encoder_options(config), embed_tokens));
  task_embeddings = register_module("task_embeddings", std::make_shared<torch::nn::Module>());
  heads = register_module("heads", std::make_shared<torch::nn::Module>());
  for (const TaskHead& h : tasks_) {
    embeddings_.push_back(task_embeddings->register_parameter(h.name, torch::empty({d})));
    task_heads_.push_back(heads->register_module(h.name, torch::nn::Linear(d, h.classes)));
  }
  task_projection = register_module("task_projection", torch::nn::Linear(d, d));
  pooler = register_module("pooler", torch::nn::Linear(d, d));
  init_weights(*this, config.pad_id);
  {
    torch::NoGradGuard no_grad;
    for (at::Tensor& z : embeddings_) z.normal_(0.0, 0.02);
  }
  // Registered after init_weights, which would overwrite their zero-initialised generators.
  if (config.camtl_alignment) alignment = register_module("conditional_alignment", nn::Film(d, d));
  if (attention != "none") {
    const std::int64_t blocks = attention == "full" ? 1 : conditional_attention_blocks(config);
    attention_biases = register_module("conditional_attention", torch::nn::ModuleList());
    for (std::int64_t i = 0; i < layers; ++i)
      attention_biases->push_back(nn::ConditionalAttentionBias(d, config.max_positions, blocks));
  }
  first_cln_layer_ = config.camtl_cln ? hierarchy_split(config, layers) : layers;
  self_attn_norms = register_module("conditional_self_attn_norms", torch::nn::ModuleList());
  final_norms = register_module("conditional_final_norms", torch::nn::ModuleList());
  for (std::int64_t i = first_cln_layer_; i < layers; ++i) {
    self_attn_norms->push_back(nn::ConditionalLayerNorm(d, d));
    final_norms->push_back(nn::ConditionalLayerNorm(d, d));
  }
  if (config.camtl_bottleneck) bottleneck = register_module("conditional_bottleneck", nn::ConditionalBottleneck(d, d));
}

at::Tensor CaMtlModelImpl::encode(const at::Tensor& ids, const at::Tensor& padding, const at::Tensor& task,
                                  at::Tensor* first_layer_inputs) {
  if (ids.size(1) != config_.max_positions && attention_biases)
    throw Error("ca_mtl: inputs must be padded to model.max_positions (" + std::to_string(config_.max_positions) +
                "), the length of the conditional attention bias; got " + std::to_string(ids.size(1)));
  const at::Tensor z = torch::stack(embeddings_).index_select(0, task);
  const at::Tensor z_projected = task_projection(z);
  nn::StackConditioning conditioning;
  conditioning.after_embedding = [&](const at::Tensor& x) {
    at::Tensor aligned = alignment ? alignment(x, z) : x;
    if (first_layer_inputs) *first_layer_inputs = aligned;
    return aligned;
  };
  const std::int64_t layers = config_.encoder_layers;
  conditioning.layers.resize(static_cast<std::size_t>(layers));
  for (std::int64_t i = 0; i < layers; ++i) {
    nn::LayerConditioning& c = conditioning.layers[static_cast<std::size_t>(i)];
    if (attention_biases) c.attention_bias = attention_biases[i]->as<nn::ConditionalAttentionBias>()->forward(z_projected);
    if (i >= first_cln_layer_) {
      auto& layer = *encoder->layers[i]->as<nn::EncoderLayer>();
      const std::size_t upper = static_cast<std::size_t>(i - first_cln_layer_);
      c.self_attn_norm_weight = self_attn_norms[upper]->as<nn::ConditionalLayerNorm>()->forward(
          layer.self_attn_layer_norm->weight, z_projected);
      c.final_norm_weight =
          final_norms[upper]->as<nn::ConditionalLayerNorm>()->forward(layer.final_layer_norm->weight, z_projected);
    }
    if (bottleneck && i == layers - 1)
      c.feed_forward_output = [&](const at::Tensor& h) { return bottleneck(h, z_projected); };
  }
  return encoder(ids, padding, nullptr, nullptr, &conditioning);
}

at::Tensor CaMtlModelImpl::pooled(const at::Tensor& ids, const at::Tensor& padding, const at::Tensor& task) {
  return torch::tanh(pooler(encode(ids, padding, task).select(1, 0)));
}

namespace {

std::size_t checked_task(std::int64_t task, std::size_t tasks) {
  if (task < 0 || task >= static_cast<std::int64_t>(tasks))
    throw Error("ca_mtl: task " + std::to_string(task) + " outside the model's " + std::to_string(tasks));
  return static_cast<std::size_t>(task);
}

}  // namespace

const at::Tensor& CaMtlModelImpl::task_embedding(std::int64_t task) const {
  return embeddings_[checked_task(task, tasks_.size())];
}

torch::nn::Linear& CaMtlModelImpl::task_head(std::int64_t task) { return task_heads_[checked_task(task, tasks_.size())]; }

at::Tensor CaMtlModelImpl::head(std::int64_t task, const at::Tensor& pooled) {
  at::Tensor out = task_head(task)->forward(nn::dropout(pooled, config_.dropout, is_training()));
  return tasks_[static_cast<std::size_t>(task)].classes == 1 ? out.squeeze(-1) : out;
}

}  // namespace strata::models
