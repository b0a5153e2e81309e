#include "strata/recipes/architectures.h"

#include <torch/nn/module.h>

#include <deque>

#include "builtin_architectures.h"
#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::recipes {

namespace {

// A deque so that references handed out stay valid as architectures are added.
std::deque<Architecture>& registry() {
  static std::deque<Architecture> all = [] {
    std::deque<Architecture> builtins;
    for (Architecture& a : builtin_architectures()) builtins.push_back(std::move(a));
    return builtins;
  }();
  return all;
}

}  // namespace

void register_architecture(Architecture architecture) {
  if (architecture.name.empty()) throw Error("register_architecture: the architecture has no name");
  if (!architecture.build || !architecture.make_task)
    throw Error("register_architecture: '" + architecture.name + "' needs a build and a make_task function");
  for (const Architecture& known : registry())
    if (known.name == architecture.name) throw Error("register_architecture: '" + architecture.name + "' is taken");
  registry().push_back(std::move(architecture));
}

const Architecture& find_architecture(std::string_view name) {
  std::vector<std::string> names;
  for (const Architecture& known : registry()) {
    if (known.name == name) return known;
    names.push_back(known.name);
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  const auto suggestion = closest_match(name, names);
  throw Error("model.architecture: unknown architecture '" + std::string(name) + "'" +
              (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) + " (known: " + list + ")");
}

std::vector<const Architecture*> architectures() {
  std::vector<const Architecture*> out;
  for (const Architecture& a : registry()) out.push_back(&a);
  return out;
}

std::shared_ptr<torch::nn::Module> build_model(const models::ModelConfig& config) {
  return find_architecture(config.architecture).build(config);
}

void throw_wrong_model(const std::string& what) {
  throw Error("the model is not a " + what + " (the architecture's build function made another type)");
}

}  // namespace strata::recipes
