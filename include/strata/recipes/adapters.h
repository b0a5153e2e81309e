#pragma once
// Adapters as a run sets them ([adapter] in the run config, `strata train --adapter NAME`):
// which adapter, with what settings. LoRA and bottleneck adapters wrap the built model's
// linear maps (nn/adapters.h); prefix-tuning and PALs are built into the model, from the
// model.prefix_* and model.pal_* keys that with_adapter_settings() fills in. A run with an
// adapter trains only the adapter's tensors plus what train.train_only adds (a new
// classification head, say), and leaves RUN/adapter.safetensors, which loads onto its base
// with `--adapter FILE`.
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

// The adapter names `strata train --adapter` takes ("lora", "bottleneck", "prefix", "pal").
std::vector<std::string> adapter_names();

// The run config with the model settings of an adapter the model is built with: prefix sets
// model.prefix_length = adapter.length, pal model.pal_size = adapter.size and model.pal_heads
// = adapter.heads, each unless the model sets it already. Other runs come back as they are.
Config with_adapter_settings(const Config& run);

// Wraps `model` with the run's adapter and reports what it added (for prefix and pal, which
// the model was built with, their parameters); nothing (nullopt) when adapter.name is empty.
// strata::Error naming the key for an unknown name, bad settings, targets that match no
// linear map of the model, or a prefix or pal adapter on a model built without one.
std::optional<nn::AdapterReport> apply_adapter(const Config& run, torch::nn::Module& model);

}  // namespace strata::recipes
