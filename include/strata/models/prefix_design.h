#pragma once
// Seed 000's prompt designs as data: which layers hold prefixes, which tokens and prefix
// slots form the segments that blocking pairs up, and the run-config keys that compile the
// designs (UniBlock, HierBlock, TruncSA, SoftSA and their hierarchical forms) into ordinary
// attention specs, which config.json then keeps. No design is a special path in the model.
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

// Declares the run-config keys that compile into specs (model.prefix_blocking,
// model.sparse_attention, model.sparse_p, model.sparse_tau, model.sparse_layers).
void declare_prefix_design(ConfigSchema& schema);
// Compiles them into config.encoder_attention / decoder_attention: prefix_block on the
// blocked layers of each stack, the sparse normaliser on the sparse encoder layers.
// strata::Error naming the key for tau <= 0, p outside (0, 1], an unknown name, or a design
// given together with an explicit spec for the same stack.
void apply_prefix_design(const Config& run, ModelConfig& config);

}  // namespace strata::models
