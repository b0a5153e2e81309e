// strata recipes list | show NAME: the named systems `strata train --recipe` applies.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/recipe.h"

namespace strata::cli {

void register_recipes(CLI::App& app) {
  CLI::App* group = app.add_subcommand("recipes", "The named systems of the seeds, for `strata train --recipe NAME`");
  group->require_subcommand(1);
  CLI::App* list = group->add_subcommand("list", "Name every recipe with one line each");
  on_run(list, [] {
    std::size_t width = 0;
    for (const recipes::Recipe& r : recipes::all_recipes()) width = std::max(width, r.name.size());
    for (const recipes::Recipe& r : recipes::all_recipes())
      std::printf("%s\n", fmt::format("{:<{}}  {:<22}  {}", r.name, width, "seed " + r.seed, r.summary).c_str());
  });
  CLI::App* show = group->add_subcommand("show", "Print a recipe's settings (run-config overrides)");
  auto name = std::make_shared<std::string>();
  show->add_option("name", *name, "the recipe")->required();
  on_run(show, [name] {
    const recipes::Recipe& r = recipes::find_recipe(*name);
    std::printf("# %s (seed %s): %s\n", r.name.c_str(), r.seed.c_str(), r.summary.c_str());
    for (const std::string& design : r.designs) {
      const recipes::Design& d = recipes::find_design(design);
      std::printf("# design %s (seed %s): %s\n", d.name.c_str(), d.seed.c_str(), d.summary.c_str());
    }
    for (const std::string& o : r.overrides) std::printf("%s\n", o.c_str());
  });
}

}  // namespace strata::cli
