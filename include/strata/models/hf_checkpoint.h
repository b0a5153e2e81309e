#pragma once
// Hugging Face checkpoints' tensors under strata's names and layouts, both ways (GPT-2's
// transposed Conv1D weights with q, k and v packed in one, T5's [buckets, heads]
// relative-position table, tied embeddings stored once or several times, Longformer's global
// projections). models/hf_config.h maps the config.json. A tensor strata cannot place is an
// error naming it, never dropped.
#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "strata/models/hf_config.h"

namespace strata::models {

using NamedTensorList = std::vector<std::pair<std::string, at::Tensor>>;

// strata::Error naming `source`, the tensor and both shapes unless the checkpoint's embedding,
// position and last layers' tensors have the sizes config.json gives: checked before a model
// of those sizes is built, so a config that claims a vast model fails cheaply.
void check_config_against_tensors(const HfModel& model, const std::map<std::string, at::Tensor>& hf,
                                  const std::string& source);

// The checkpoint's tensors under strata's names, for a model whose tensors are `expected`
// (names and shapes). strata::Error naming `source` and the tensor when one is missing, has
// another shape, is left over, or is a tied copy that differs from the tensor it copies.
// Tensors already in strata's layout share `hf`'s storage.
std::map<std::string, at::Tensor> hf_weights_to_strata(const HfModel& model,
                                                       const std::map<std::string, at::Tensor>& hf,
                                                       const NamedTensorList& expected, const std::string& source);
// The model's tensors under transformers' names and layouts (tied weights once, as
// transformers 5 writes them).
NamedTensorList strata_weights_to_hf(const HfModel& model, const NamedTensorList& weights);

}  // namespace strata::models
