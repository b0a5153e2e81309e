#pragma once
// Tiny models of each architecture for the adapter tests, each with its output on fixed
// inputs, and a few optimizer steps on whatever is left trainable.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/bottleneck_adapter.h"

namespace strata::test_support {

inline models::ModelConfig tiny_config(const std::string& architecture) {
  models::ModelConfig c;
  c.architecture = architecture;
  c.vocab_size = 40;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 2;
  c.decoder_layers = 2;
  c.max_positions = 32;
  c.dropout = 0.0;
  c.tie_embeddings = false;  // an lm_head to adapt
  c.num_labels = 3;
  return c;
}

struct TinyModel {
  std::shared_ptr<torch::nn::Module> module;
  std::function<at::Tensor()> output;  // logits on inputs fixed at construction
  models::ModelConfig config;
};

// architecture: "seq2seq", "causal_lm" or "encoder"; built (its config changed by `adjust`)
// and its inputs drawn under `seed`.
inline TinyModel tiny_model(const std::string& architecture, std::uint64_t seed,
                            const std::function<void(models::ModelConfig&)>& adjust = {}) {
  torch::manual_seed(seed);
  models::ModelConfig c = tiny_config(architecture);
  if (adjust) adjust(c);
  const at::Tensor ids = torch::randint(3, 40, {2, 6}, torch::kInt64);
  const at::Tensor targets = torch::randint(3, 40, {2, 5}, torch::kInt64);
  if (architecture == "seq2seq") {
    models::Seq2Seq model(c);
    return {model.ptr(), [=]() mutable { return model->forward(ids, at::Tensor(), targets); }, c};
  }
  if (architecture == "causal_lm") {
    models::CausalLm model(c);
    return {model.ptr(), [=]() mutable { return model->forward(ids); }, c};
  }
  models::EncoderModel model(c);
  const at::Tensor padding = torch::ones({2, 6}, torch::kBool);
  return {model.ptr(), [=]() mutable { return model->forward(ids, padding).logits; }, c};
}

// Bottleneck options set field by field: GCC 12 warns falsely (maybe-uninitialized) about
// nested designated initialisers of them, whose settings hold a string.
inline nn::BottleneckOptions bottleneck_options(std::int64_t size, const std::string& activation = "relu") {
  nn::BottleneckOptions options;
  options.settings.size = size;
  options.settings.activation = activation;
  return options;
}

// Copies of every parameter, by name.
inline std::map<std::string, at::Tensor> snapshot(const torch::nn::Module& module) {
  std::map<std::string, at::Tensor> out;
  for (const auto& item : module.named_parameters()) out[item.key()] = item.value().detach().clone();
  return out;
}

// Adam steps on the trainable parameters, pulling the output towards a fixed random target.
inline void train_steps(TinyModel& model, int steps) {
  std::vector<at::Tensor> trainable;
  for (const at::Tensor& p : model.module->parameters())
    if (p.requires_grad()) trainable.push_back(p);
  torch::optim::Adam optimizer(trainable, torch::optim::AdamOptions(1e-2));
  model.module->train();
  torch::manual_seed(99);
  const at::Tensor target = torch::randn_like(model.output().detach());
  for (int step = 0; step < steps; ++step) {
    optimizer.zero_grad();
    (model.output() - target).pow(2).mean().backward();
    optimizer.step();
  }
  model.module->eval();
}

}  // namespace strata::test_support
