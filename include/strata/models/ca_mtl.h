#pragma once
// CA-MTL (thesis ch. 3): one BERT-like encoder shared by T tasks, conditioned on each row's
// task through a task embedding z (nn.Embedding) and its projection z' = Linear(z) that the
// in-encoder modules read (nn/task_conditioning.h):
//   - conditional alignment: FiLM of the embeddings' output by the raw z (the public code's
//     form of Eq. 3.2; no R matrix)
//   - conditional attention: a block-diagonal bias on every layer's scores (or FBA's full
//     block, or the hard variant that also masks attention to the block)
//   - conditional LayerNorm on both norms of the upper layers (from hierarchy_split)
//   - the conditional bottleneck on the top layer's feed-forward output
// Each task reads BERT's pooled first token (tanh pooler, dropout) through its own head:
// classes logits, or one value for a regression. The parameter names of the encoder are
// the encoder architecture's (embed_tokens, encoder.*), so a masked-LM-pretrained encoder
// loads onto it as its base; every conditional module's name starts with conditional_.
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <string>
#include <vector>

#include "strata/models/model_config.h"
#include "strata/nn/task_conditioning.h"
#include "strata/nn/transformer_stack.h"

namespace strata::models {

struct TaskHead {
  std::string name;
  std::int64_t classes = 2;  // 1 = a regression
  bool operator==(const TaskHead&) const = default;
};

// model.tasks: "name:classes,..." <-> heads. strata::Error naming model.tasks when malformed.
std::vector<TaskHead> parse_task_heads(const std::string& text);
std::string format_task_heads(const std::vector<TaskHead>& heads);

class CaMtlModelImpl : public torch::nn::Module {
 public:
  explicit CaMtlModelImpl(const ModelConfig& config);

  // ids, padding: [B, L] with L = max_positions (every input padded to it: the attention
  // bias is L × L); task: [B] int64. Returns the pooled vectors [B, d] (before dropout).
  at::Tensor pooled(const at::Tensor& ids, const at::Tensor& padding, const at::Tensor& task);
  // The hidden states [B, L, d] of the encoder's last layer; first_layer_inputs, when given,
  // receives the first layer's inputs [B, L, d] (embeddings after the conditional alignment,
  // what CovSim reads).
  at::Tensor encode(const at::Tensor& ids, const at::Tensor& padding, const at::Tensor& task,
                    at::Tensor* first_layer_inputs = nullptr);
  // Task `task`'s outputs for pooled rows [n, d] of that task: [n, classes] logits, or [n] values
  // for a regression. Applies the head's dropout.
  at::Tensor head(std::int64_t task, const at::Tensor& pooled);

  const std::vector<TaskHead>& tasks() const { return tasks_; }
  const ModelConfig& config() const { return config_; }

  // The task embedding z [d] of task `task` (an index into tasks()).
  const at::Tensor& task_embedding(std::int64_t task) const;
  // Task `task`'s head, Linear(d, classes).
  torch::nn::Linear& task_head(std::int64_t task);

  torch::nn::Embedding embed_tokens{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  // Per task, by name, so a model of other tasks loads what it shares by name (a new task
  // adapted from a trained model keeps the encoder and the conditional modules):
  // task_embeddings.NAME [d] and heads.NAME.{weight,bias}.
  std::shared_ptr<torch::nn::Module> task_embeddings, heads;
  torch::nn::Linear task_projection{nullptr};  // z -> z'
  torch::nn::Linear pooler{nullptr};
  // Conditional modules; null (or empty) when the config switches them off.
  nn::Film alignment{nullptr};
  torch::nn::ModuleList attention_biases{nullptr};                   // one per layer
  torch::nn::ModuleList self_attn_norms{nullptr}, final_norms{nullptr};  // one per upper layer
  nn::ConditionalBottleneck bottleneck{nullptr};

 private:
  ModelConfig config_;
  std::vector<TaskHead> tasks_;
  std::vector<at::Tensor> embeddings_;       // task_embeddings' parameters, in task order
  std::vector<torch::nn::Linear> task_heads_;  // heads' modules, in task order
  std::int64_t first_cln_layer_ = 0;
};
TORCH_MODULE(CaMtlModel);

// N, the blocks of the conditional attention bias (model.camtl_blocks; 0 = d_model /
// max_positions, strata::Error unless that divides evenly).
std::int64_t conditional_attention_blocks(const ModelConfig& config);

}  // namespace strata::models
