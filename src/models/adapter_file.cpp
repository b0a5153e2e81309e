#include "strata/models/adapter_file.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/safetensors.h"
#include "strata/models/backbone_fingerprint.h"
#include "strata/nn/safetensors_torch.h"

namespace strata::models {
namespace {

constexpr const char* kFormat = "strata-adapter/1";

// Adds `module` to the entry with these settings, or to a new one.
template <class Options, class Settings>
void add_to_group(std::vector<Options>& groups, const Settings& settings, const std::string& module) {
  for (Options& group : groups)
    if (group.settings == settings) {
      group.targets.push_back(module);
      return;
    }
  groups.push_back({.settings = settings, .targets = {module}});
}

nlohmann::json adapters_json(const AdapterFile& adapters) {
  nlohmann::json out = nlohmann::json::array();
  for (const nn::LoraOptions& o : adapters.lora)
    out.push_back({{"kind", "lora"}, {"r", o.settings.r}, {"alpha", o.settings.alpha},
                   {"dropout", o.settings.dropout}, {"modules", o.targets}});
  for (const nn::BottleneckOptions& o : adapters.bottleneck)
    out.push_back({{"kind", "bottleneck"}, {"size", o.settings.size}, {"activation", o.settings.activation},
                   {"modules", o.targets}});
  return out;
}

// The "adapters" metadata into `out`; strata::Error naming the file when malformed.
void read_adapters_json(const std::string& text, const std::string& name, AdapterFile& out) {
  try {
    for (const nlohmann::json& entry : nlohmann::json::parse(text)) {
      const std::string kind = entry.at("kind").get<std::string>();
      const auto modules = entry.at("modules").get<std::vector<std::string>>();
      if (kind == "lora") {
        nn::LoraSettings s{.r = entry.at("r").get<std::int64_t>(), .alpha = entry.at("alpha").get<double>(),
                           .dropout = entry.at("dropout").get<double>()};
        s.check();
        out.lora.push_back({.settings = s, .targets = modules});
      } else if (kind == "bottleneck") {
        nn::BottleneckSettings s{.size = entry.at("size").get<std::int64_t>(),
                                 .activation = entry.at("activation").get<std::string>()};
        s.check();
        out.bottleneck.push_back({.settings = s, .targets = modules});
      } else {
        throw Error("unknown adapter kind '" + kind + "' (known: lora, bottleneck)");
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(name + ": metadata 'adapters': malformed: " + e.what());
  } catch (const Error& e) {
    throw Error(name + ": metadata 'adapters': " + e.what());
  }
}

}  // namespace

void save_adapter_file(const std::filesystem::path& file, const torch::nn::Module& model) {
  AdapterFile adapters;
  for (const auto& [module, linear] : nn::adaptable_linears(model)) {
    if (linear->has_lora()) {
      if (linear->lora_merged())
        throw Error(file.string() + ": cannot save the LoRA of " + module +
                    ": it is merged into the weight (unmerge_lora first)");
      add_to_group(adapters.lora, linear->lora_settings(), module);
    }
    if (linear->bottleneck) add_to_group(adapters.bottleneck, linear->bottleneck->settings(), module);
  }
  if (adapters.lora.empty() && adapters.bottleneck.empty())
    throw Error(file.string() + ": the model has no adapters to save");
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  for (const auto& item : model.named_parameters())
    if (nn::is_adapter_parameter(item.key())) tensors.emplace_back(item.key(), item.value().detach());
  save_tensors(file, tensors,
               {{"format", kFormat}, {"adapters", adapters_json(adapters).dump()},
                {"base_fingerprint", backbone_fingerprint(model)}});
}

AdapterFile read_adapter_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  const SafetensorsFile raw(file);  // validates the header; load_tensors below copies the data
  const auto& meta = raw.metadata();
  auto field = [&](const char* key) -> const std::string& {
    const auto it = meta.find(key);
    if (it == meta.end()) throw Error(name + ": not a strata adapter file (no '" + std::string(key) + "' in its metadata)");
    return it->second;
  };
  if (field("format") != kFormat)
    throw Error(name + ": adapter file format '" + field("format") + "', this strata reads " + kFormat);
  AdapterFile out;
  read_adapters_json(field("adapters"), name, out);
  out.fingerprint = field("base_fingerprint");
  out.tensors = load_tensors(file);
  return out;
}

nn::AdapterReport load_adapter_file(const std::filesystem::path& file, torch::nn::Module& base) {
  const std::string name = file.string();
  const AdapterFile adapters = read_adapter_file(file);
  if (!nn::adapter_parameter_names(base).empty())
    throw Error(name + ": the model has adapters already; load an adapter file onto the base model alone");
  const std::string fingerprint = backbone_fingerprint(base);
  if (fingerprint != adapters.fingerprint)
    throw Error(name + ": the adapters were trained on another base model (fingerprint " + adapters.fingerprint +
                "), not on this one (" + fingerprint + ")");

  nn::AdapterReport report;
  auto add = [&](const nn::AdapterReport& added) {
    report.modules.insert(report.modules.end(), added.modules.begin(), added.modules.end());
    report.parameters += added.parameters;
  };
  for (const nn::LoraOptions& options : adapters.lora) add(nn::add_lora(base, options));
  for (const nn::BottleneckOptions& options : adapters.bottleneck) add(nn::add_bottleneck(base, options));

  torch::NoGradGuard no_grad;
  const auto parameters = base.named_parameters();
  const std::vector<std::string> wanted = nn::adapter_parameter_names(base);
  for (const std::string& tensor : wanted) {
    const auto it = adapters.tensors.find(tensor);
    if (it == adapters.tensors.end()) throw Error(name + ": tensor '" + tensor + "' is missing");
    at::Tensor parameter = parameters[tensor];
    if (it->second.sizes() != parameter.sizes())
      throw Error(name + ": tensor '" + tensor + "' has shape " + c10::str(it->second.sizes()) + ", the adapter's is " +
                  c10::str(parameter.sizes()));
    parameter.copy_(it->second);
  }
  for (const auto& [tensor, value] : adapters.tensors)
    if (std::find(wanted.begin(), wanted.end(), tensor) == wanted.end())
      throw Error(name + ": tensor '" + tensor + "' belongs to none of the adapters its metadata describes");
  return report;
}

}  // namespace strata::models
