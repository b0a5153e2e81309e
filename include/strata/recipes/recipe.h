#pragma once
// Recipes: the seed systems as named configurations. A recipe is a list of run-config
// overrides (key=value, the same form as on the command line) applied after the config file
// and before the user's own overrides, so every recipe is inspectable (`strata recipes show`)
// and any of its settings can be changed on top. It names the designs (recipes/designs.h)
// whose keys it sets.
#include <string>
#include <string_view>
#include <vector>

namespace strata::recipes {

struct Recipe {
  std::string name;
  std::string seed;     // where it comes from, e.g. "001 §5.2"
  std::string summary;  // one line
  std::vector<std::string> overrides;
  std::vector<std::string> designs;  // the designs whose keys the overrides set
};

// Every recipe, in the order `strata recipes list` prints them.
const std::vector<Recipe>& all_recipes();

// strata::Error naming the closest known recipe when `name` is unknown.
const Recipe& find_recipe(std::string_view name);

}  // namespace strata::recipes
