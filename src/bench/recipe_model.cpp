#include "strata/bench/recipe_model.h"

#include "strata/core/error.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/recipe.h"

namespace strata::bench {

Config recipe_config(std::string_view recipe, const std::vector<std::string>& overrides) {
  Config config;
  for (const std::string& assignment : recipes::find_recipe(recipe).overrides) config.apply_override(assignment);
  for (const std::string& assignment : overrides) config.apply_override(assignment);
  config.validate(recipes::run_schema());
  return config;
}

models::ModelConfig recipe_model(std::string_view recipe, const std::vector<std::string>& overrides) {
  try {
    models::ModelConfig model = recipes::model_config(recipe_config(recipe, overrides));
    model.check();
    return model;
  } catch (const Error& e) {
    throw Error("recipe " + std::string(recipe) + ": " + e.what());
  }
}

}  // namespace strata::bench
