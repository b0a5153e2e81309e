#pragma once
// A tuned prefix as a small file that loads onto its base model (seed 000; HF PEFT's adapter
// files): the keys and values every prefixed layer receives (the reparameterising MLP is
// needed only while tuning), the tuned model's config (prefix fields and the attention specs
// of its design), and a fingerprint of the frozen backbone it was tuned on, so a prefix is
// never applied to another base, even one of the same size.
#include <filesystem>
#include <functional>
#include <string>

#include "strata/models/backbone_fingerprint.h"
#include "strata/models/seq2seq.h"

namespace strata::models {

// Writes `model`'s prefix states (computed without gradient), its config and its backbone's
// fingerprint, atomically. strata::Error for a model without prefixes.
void save_prefix_file(const std::filesystem::path& file, Seq2Seq& model);

struct PrefixFile {
  ModelConfig config;  // the tuned model's
  std::string fingerprint;
  nn::PrefixStates states;
};

// strata::Error naming the file when it is not a strata prefix file or is malformed.
PrefixFile read_prefix_file(const std::filesystem::path& file);

// The base's config with the prefix's design, after checking that the prefix was tuned on a
// model of the base's architecture and sizes (strata::Error naming the file, the field and
// both values otherwise).
ModelConfig config_with_prefix(const ModelConfig& base, const PrefixFile& prefix, const std::filesystem::path& file);

// Builds the prefixed model from a loaded base's config and weights: checks the backbone's
// fingerprint (strata::Error naming both files when the prefix was tuned on another base) and
// installs the prefix. `load_base` copies the base's weights into the model it is given.
Seq2Seq attach_prefix(const ModelConfig& base_config, const std::filesystem::path& base_source,
                      const std::filesystem::path& file, const std::function<void(Seq2Seq&)>& load_base);

}  // namespace strata::models
