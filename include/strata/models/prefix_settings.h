#pragma once
// Prefix-tuning's settings on a model (seed 000 §3): which layers hold prefixes, where the
// hierarchical designs split a stack, and the checks of the model.prefix_* fields. The designs
// that compile into attention specs (UniBlock, HierBlock, TruncSA, SoftSA) are on the assembly
// floor (recipes/designs.h); no design is a special path in the model.
#include <cstdint>
#include <string>
#include <vector>

#include "strata/models/model_config.h"

namespace strata::models {

// The first layer above the lower ones of a stack of `layers` (model.hierarchy_split; 0 =
// half, rounded up; never more than the stack).
std::int64_t hierarchy_split(const ModelConfig& config, std::int64_t layers);

// Which of a stack's `layers` layers have prefixes (model.prefix_layers); all false when the
// model has none. strata::Error naming the key on a malformed list or an index out of range.
std::vector<bool> prefix_layers(const ModelConfig& config, std::int64_t layers);

// strata::Error naming the model.* key when the prefix fields cannot work together: negative
// sizes, blocks < 1, blocking without prefixes or with more groups than prefix slots, a
// prefix_block spec on a layer without prefixes, prefixes outside seq2seq.
void check_prefix_design(const ModelConfig& config);

}  // namespace strata::models
