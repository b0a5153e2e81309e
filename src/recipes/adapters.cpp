#include "strata/recipes/adapters.h"

#include <torch/nn/module.h>

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::recipes {

void declare_adapter_keys(ConfigSchema& schema) {
  schema.add("adapter.name", std::string(),
             "an adapter that alone trains (with train.train_only): \"\" = none, lora (Hu et al. 2021) or bottleneck "
             "(Houlsby et al. 2019), which wrap the built model's linear maps, or prefix (Li & Liang 2021) or pal "
             "(Stickland & Murray 2019), which the model is built with");
  const nn::LoraSettings lora;
  schema.add("adapter.rank", lora.r, "LoRA: the rank r of the update B A");
  schema.add("adapter.alpha", lora.alpha, "LoRA: the update is scaled by alpha / r");
  schema.add("adapter.dropout", lora.dropout, "LoRA: dropout on the adapter's input while training");
  const nn::BottleneckSettings bottleneck;
  schema.add("adapter.size", bottleneck.size,
             "bottleneck: the adapter's inner width; pal: the PAL's hidden size (when model.pal_size is 0)");
  schema.add("adapter.activation", bottleneck.activation, "bottleneck: relu or gelu");
  schema.add("adapter.heads", std::int64_t(4), "pal: the PAL's heads (when model.pal_size is 0)");
  schema.add("adapter.length", std::int64_t(100), "prefix: prefix slots per layer (when model.prefix_length is 0)");
  schema.add("adapter.targets", std::vector<std::string>(),
             "glob patterns over the full names of linear maps (e.g. \"*.q_proj\", \"decoder.*.fc1\"); empty = the "
             "adapter's default: LoRA on every attention's q_proj and v_proj, bottleneck after every attention's "
             "out_proj and every fc2");
}

std::vector<std::string> adapter_names() { return {"lora", "bottleneck", "prefix", "pal"}; }

namespace {

// strata::Error naming the known adapters, with the closest one.
[[noreturn]] void unknown_adapter(const std::string& name) {
  const auto suggestion = closest_match(name, adapter_names());
  throw Error("adapter.name: unknown adapter '" + name + "'" +
              (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) +
              " (known: lora, bottleneck, prefix, pal)");
}

// An adapter the model was built with: its parameters, as a report (no linear map wrapped).
nn::AdapterReport built_in(const torch::nn::Module& model, const std::string& name, const char* key) {
  nn::AdapterReport report;
  for (const auto& item : model.named_parameters())
    if (nn::is_adapter_parameter(item.key())) report.parameters += item.value().numel();
  if (report.parameters == 0)
    throw Error("adapter.name = " + name + ", but the model has none (" + key + " is 0)");
  return report;
}

}  // namespace

Config with_adapter_settings(const Config& run) {
  Config out = run;
  const std::string name = run.get<std::string>("adapter.name");
  if (name == "prefix" && run.get<std::int64_t>("model.prefix_length") == 0)
    out.apply_override("model.prefix_length=" + std::to_string(run.get<std::int64_t>("adapter.length")));
  if (name == "pal" && run.get<std::int64_t>("model.pal_size") == 0) {
    out.apply_override("model.pal_size=" + std::to_string(run.get<std::int64_t>("adapter.size")));
    out.apply_override("model.pal_heads=" + std::to_string(run.get<std::int64_t>("adapter.heads")));
  }
  return out;
}

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
  if (name == "prefix") return built_in(model, name, "model.prefix_length");
  if (name == "pal") return built_in(model, name, "model.pal_size");
  unknown_adapter(name);
}

}  // namespace strata::recipes
