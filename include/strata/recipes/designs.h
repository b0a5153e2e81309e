#pragma once
// Designs: each seed technique as one unit, the run-config keys it reads and how it compiles
// them into the model's attention specs and settings. Recipes name the designs they use;
// config.json keeps only what a design compiled into (ordinary specs), so a trained model never
// depends on the design that made it. ModelConfig::from_config reads sizes and explicit specs;
// model_config() here adds every design on top.
#include <string>
#include <vector>

#include "strata/core/config.h"
#include "strata/models/model_config.h"

namespace strata::recipes {

struct Design {
  std::string name;     // what recipes call it, e.g. "pattern_injection"
  std::string seed;     // where it comes from, e.g. "003 §4.3"
  std::string summary;  // one line
  void (*declare)(ConfigSchema& schema);                         // its keys, defaults and help
  void (*apply)(const Config& run, models::ModelConfig& model);  // compiles them into `model`
  // The model's own settings it compiles from besides its keys (e.g. the prefix block
  // counts, which the model reads too), so that a recipe setting them names the design.
  std::vector<std::string> reads = {};
};

// Every design, in the order they are applied.
const std::vector<Design>& designs();
// strata::Error naming the known designs when `name` is unknown.
const Design& find_design(const std::string& name);
// The keys `design` declares, then the ones it reads.
std::vector<std::string> design_keys(const Design& design);

// Every key a run knows: train::run_schema() (model sizes and specs, data, train, decode) plus
// each design's and each adapter's keys.
ConfigSchema run_schema();

// The model config of a validated run config: ModelConfig::from_config, then every design.
// strata::Error naming the key when a design's settings are wrong or clash with an explicit spec.
models::ModelConfig model_config(const Config& run);

}  // namespace strata::recipes
