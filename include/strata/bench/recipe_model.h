#pragma once
// Benchmark cases from recipe names (`strata recipes list`), by the path training takes: a run
// config with the recipe's overrides, then the benchmark's own sizes (model.layers, d_model,
// prefix_length, ...), validated against the run schema and compiled into the model's
// per-layer attention specs. A benchmark builds its stacks from those specs, so it measures
// the recipe itself, not a restatement of it.
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/config.h"
#include "strata/models/model_config.h"

namespace strata::bench {

// The recipe's run config with `overrides` ("key=value") applied after it, validated.
Config recipe_config(std::string_view recipe, const std::vector<std::string>& overrides);

// recipe_config's model, compiled and checked. strata::Error naming the recipe otherwise.
models::ModelConfig recipe_model(std::string_view recipe, const std::vector<std::string>& overrides);

}  // namespace strata::bench
