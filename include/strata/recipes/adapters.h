#pragma once
// Adapters as a run sets them ([adapter] in the run config, `strata train --adapter NAME`):
// which adapter wraps the built model (nn/adapters.h), with what settings and on which linear
// maps. A run with an adapter trains only the adapter's tensors plus what train.train_only
// adds (a new classification head, say), and leaves RUN/adapter.safetensors, which loads onto
// its base with `--adapter FILE`.
#include <optional>
#include <string>
#include <vector>

#include "strata/core/config.h"
#include "strata/nn/adapters.h"

namespace torch::nn {
class Module;
}

namespace strata::recipes {

// The adapter.* keys.
void declare_adapter_keys(ConfigSchema& schema);

// The adapter names `strata train --adapter` takes ("lora", "bottleneck").
std::vector<std::string> adapter_names();

// Wraps `model` with the run's adapter; nothing (nullopt) when adapter.name is empty.
// strata::Error naming the key for an unknown name, bad settings, or targets that match no
// linear map of the model.
std::optional<nn::AdapterReport> apply_adapter(const Config& run, torch::nn::Module& model);

}  // namespace strata::recipes
