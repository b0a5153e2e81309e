#include "strata/recipes/adapters.h"

#include <torch/nn/module.h>

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::recipes {

void declare_adapter_keys(ConfigSchema& schema) {
  schema.add("adapter.name", std::string(),
             "an adapter that wraps the built model, and alone trains (with train.train_only): \"\" = none, lora "
             "(Hu et al. 2021) or bottleneck (Houlsby et al. 2019)");
  const nn::LoraSettings lora;
  schema.add("adapter.rank", lora.r, "LoRA: the rank r of the update B A");
  schema.add("adapter.alpha", lora.alpha, "LoRA: the update is scaled by alpha / r");
  schema.add("adapter.dropout", lora.dropout, "LoRA: dropout on the adapter's input while training");
  const nn::BottleneckSettings bottleneck;
  schema.add("adapter.size", bottleneck.size, "bottleneck: the adapter's inner width");
  schema.add("adapter.activation", bottleneck.activation, "bottleneck: relu or gelu");
  schema.add("adapter.targets", std::vector<std::string>(),
             "glob patterns over the full names of linear maps (e.g. \"*.q_proj\", \"decoder.*.fc1\"); empty = the "
             "adapter's default: LoRA on every attention's q_proj and v_proj, bottleneck after every attention's "
             "out_proj and every fc2");
}

std::vector<std::string> adapter_names() { return {"lora", "bottleneck"}; }

std::optional<nn::AdapterReport> apply_adapter(const Config& run, torch::nn::Module& model) {
  const std::string name = run.get<std::string>("adapter.name");
  if (name.empty()) return std::nullopt;
  const auto targets = run.get<std::vector<std::string>>("adapter.targets");
  try {
    if (name == "lora") {
      nn::LoraOptions options;
      options.settings.r = run.get<std::int64_t>("adapter.rank");
      options.settings.alpha = run.get<double>("adapter.alpha");
      options.settings.dropout = run.get<double>("adapter.dropout");
      if (!targets.empty()) options.targets = targets;
      return nn::add_lora(model, options);
    }
    if (name == "bottleneck") {
      nn::BottleneckOptions options;
      options.settings.size = run.get<std::int64_t>("adapter.size");
      options.settings.activation = run.get<std::string>("adapter.activation");
      if (!targets.empty()) options.targets = targets;
      return nn::add_bottleneck(model, options);
    }
  } catch (const Error& e) {
    throw Error(std::string("adapter: ") + e.what());
  }
  const auto suggestion = closest_match(name, adapter_names());
  throw Error("adapter.name: unknown adapter '" + name + "'" +
              (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) + " (known: lora, bottleneck)");
}

}  // namespace strata::recipes
