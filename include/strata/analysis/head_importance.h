#pragma once
// Head importance (seed 003 §3.1.1, §4.2.1): how much a task's validation loss depends on
// each attention head, for every multi-head attention module of a model (a "layer" here is
// one such module, named by its module path, e.g. `encoder.layers.3.self_attn`). Two
// gradient-based estimates:
//  - taylor (Molchanov et al. 2019, first order, as Li et al. 2021 use it): with G the
//    gradient of the mean validation loss (summed over the whole set, divided by its label
//    count), a head scores |Σ G ⊙ θ| over its parameters θ: its rows of q_proj, k_proj and
//    v_proj (weights and biases) and its columns of out_proj.weight;
//  - head_mask (Michel et al. 2019): a gate of ones multiplies each head's output; a head
//    scores Σ over batches of |∂L_batch/∂gate_h| (L_batch the batch's summed loss), divided
//    by the label count.
// Both are then normalised per layer (Michel: each layer's vector divided by its L2 norm)
// or left as they are.
#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace torch::nn {
class Module;
}

namespace strata {
class Progress;
}

namespace strata::nn {
class MultiHeadAttentionImpl;
}

namespace strata::train {
class TrainTask;
}

namespace strata::analysis {

// A value per head of every layer: one row per attention module, as long as its heads.
using HeadMatrix = std::vector<std::vector<double>>;

struct NamedAttention {
  std::string name;  // module path, "encoder.layers.0.self_attn"
  std::shared_ptr<nn::MultiHeadAttentionImpl> module;
};

// Every multi-head attention module of `model`, in registration order (encoder layers, then
// decoder layers with self- before cross-attention; a PAL's heads after its layer's own).
std::vector<NamedAttention> attention_modules(torch::nn::Module& model);

struct RankedHead {
  std::size_t layer = 0;  // row of the matrix
  std::int64_t head = 0;  // from 0
  double value = 0;
};

// The k largest values of the matrix, largest first (ties: earlier layer, then lower head).
std::vector<RankedHead> top_heads(const HeadMatrix& matrix, std::size_t k);

enum class ImportanceMethod { Taylor, HeadMask };
enum class ImportanceNormalization { Layer, None };

// "taylor", "head_mask" / "layer", "none"; parsing fails with a strata::Error naming the
// known values.
std::string_view importance_method_name(ImportanceMethod method);
ImportanceMethod importance_method_from_name(std::string_view name);
std::string_view normalization_name(ImportanceNormalization normalization);
ImportanceNormalization normalization_from_name(std::string_view name);

struct ImportanceOptions {
  ImportanceMethod method = ImportanceMethod::Taylor;
  ImportanceNormalization normalize = ImportanceNormalization::Layer;
  std::size_t max_examples = 0;   // the first N validation examples; 0 = all
  std::size_t max_tokens = 4096;  // per batch: rows × longest cost, batches in example order
  Progress* progress = nullptr;   // advanced per example when given
};

struct HeadImportance {
  ImportanceMethod method = ImportanceMethod::Taylor;
  ImportanceNormalization normalize = ImportanceNormalization::Layer;
  std::vector<std::string> layers;  // attention module names, the matrix's rows
  HeadMatrix scores;
  std::int64_t examples = 0;  // validation examples read
  std::int64_t labels = 0;    // labelled tokens (or examples) the loss averaged over
};

// The importance of every head of task.model() on the task's validation split (its
// costs(Split::Valid) and loss(Split::Valid, ...), no label smoothing). The model runs in
// eval mode (restored afterwards) with gradients; the parameters' .grad fields are left
// untouched and the head gates are removed again. strata::Error when the model has no
// multi-head attention, the split is empty or carries no label, or the loss does not depend
// on the parameters (all frozen).
HeadImportance head_importance(train::TrainTask& task, const ImportanceOptions& options);

// {"method", "normalize", "examples", "labels", "layers": [...], "heads": [H per layer],
//  "scores": [[...], ...], "top_head_per_layer": [h, ...]}
nlohmann::ordered_json to_json(const HeadImportance& importance);

}  // namespace strata::analysis
