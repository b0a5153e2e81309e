#include "strata/train/base_model.h"

#include <algorithm>

#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/nn/safetensors_torch.h"
#include "strata/train/checkpoint.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string shape_string(at::IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// "a, b, c and 7 more"
std::string name_list(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 5;
  std::vector<std::string> shown(names.begin(), names.begin() + std::min(names.size(), kShown));
  std::string out = fmt::format("{}", fmt::join(shown, ", "));
  if (names.size() > kShown) out.append(fmt::format(" and {} more", names.size() - kShown));
  return out;
}

// The base's config.json "model" object, read field by field rather than through
// ModelConfig::from_json: a base written before later fields existed still qualifies.
Json base_model_config(const fs::path& file) {
  Json json;
  try {
    json = Json::parse(read_file(file));
  } catch (const Json::exception& e) {
    throw error_at(file, 0, "", std::string("invalid JSON: ").append(e.what()));
  }
  if (!json.is_object() || !json.contains("model") || !json.at("model").is_object())
    throw error_at(file, 0, "model", "missing (expected the model config object)");
  return json.at("model");
}

// strata::Error unless the base has the architecture, width, heads and vocabulary of the new model.
void check_same_shape(const Json& base, const models::ModelConfig& config, const fs::path& file,
                      const std::vector<std::string>& other_architectures) {
  const auto mismatch = [&](const char* name, const std::string& base_value, const std::string& value) {
    if (base_value != value)
      throw error_at(file, 0, std::string("model.") + name,
                     fmt::format("the base model has {}, the new model {}", base_value, value));
  };
  const auto base_field = [&](const char* name) -> const Json& {
    if (!base.contains(name)) throw error_at(file, 0, std::string("model.") + name, "missing");
    return base.at(name);
  };
  const Json& architecture = base_field("architecture");
  const std::string base_architecture = architecture.is_string() ? architecture.get<std::string>() : architecture.dump();
  if (std::find(other_architectures.begin(), other_architectures.end(), base_architecture) == other_architectures.end())
    mismatch("architecture", base_architecture, config.architecture);
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"d_model", config.d_model}, {"heads", config.heads}, {"vocab_size", config.vocab_size}};
  for (const auto& [name, value] : sizes) mismatch(name, base_field(name).dump(), std::to_string(value));
}

}  // namespace

BaseLoadReport load_base_weights(torch::nn::Module& model, const models::ModelConfig& config,
                                 const fs::path& base, const std::vector<std::string>& other_architectures,
                                 const std::vector<std::string>& exclude) {
  BaseLoadReport report;
  report.checkpoint = resolve_checkpoint(base);
  check_same_shape(base_model_config(report.checkpoint / "config.json"), config, report.checkpoint / "config.json",
                   other_architectures);
  const fs::path weights_file = report.checkpoint / "model.safetensors";
  const std::map<std::string, at::Tensor> weights = load_tensors(weights_file);

  const NamedTensors targets = module_tensors(model);
  std::set<std::string> model_names;
  const auto excluded = [&](const std::string& name) {
    return std::any_of(exclude.begin(), exclude.end(), [&](const std::string& glob) { return glob_match(glob, name); });
  };
  for (const auto& [name, target] : targets) {
    model_names.insert(name);
    if (excluded(name)) {
      report.excluded.push_back(name);
      continue;
    }
    const auto found = weights.find(name);
    if (found == weights.end()) {
      report.missing.push_back(name);
      continue;
    }
    if (found->second.sizes() != target.sizes())
      throw Error(fmt::format("{}: tensor '{}' has shape {} in the base, {} in the new model", weights_file.string(),
                              name, shape_string(found->second.sizes()), shape_string(target.sizes())));
    report.loaded.push_back(name);
  }
  for (const auto& [name, tensor] : weights)
    if (!model_names.contains(name)) report.unused.push_back(name);

  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : targets)
    if (const auto found = weights.find(name); found != weights.end() && !excluded(name)) target.copy_(found->second);
  return report;
}

std::string describe(const BaseLoadReport& report) {
  std::string out = fmt::format("loaded {} tensors from {}", report.loaded.size(), report.checkpoint.string());
  out.append(fmt::format("; {} new (not in the base)", report.missing.size()));
  if (!report.missing.empty()) out.append(": ").append(name_list(report.missing));
  if (!report.excluded.empty())
    out.append(fmt::format("; {} left out (train.base_exclude): {}", report.excluded.size(), name_list(report.excluded)));
  out.append(fmt::format("; {} unused", report.unused.size()));
  if (!report.unused.empty()) out.append(": ").append(name_list(report.unused));
  return out;
}

}  // namespace strata::train
