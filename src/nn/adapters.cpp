#include "strata/nn/adapters.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/strings.h"

namespace strata::nn {
namespace {

const std::vector<std::string> kLoraPatterns = {"*.lora_A", "*.lora_B"};
const std::vector<std::string> kBottleneckPatterns = {"*.bottleneck.*"};
// The adapters a model is built with (their keys or heads enter the attention specs).
const std::vector<std::string> kPrefixPatterns = {"prefix.*"};
const std::vector<std::string> kPalPatterns = {"*.pal.*"};
const std::vector<const std::vector<std::string>*> kAllPatterns = {&kLoraPatterns, &kBottleneckPatterns,
                                                                   &kPrefixPatterns, &kPalPatterns};

bool matches_any(const std::vector<std::string>& patterns, std::string_view name) {
  for (const std::string& pattern : patterns)
    if (glob_match(pattern, name)) return true;
  return false;
}

// ["a", "b"]
std::string listed(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", \"" : "\"") + items[i] + "\"";
  return out + "]";
}

using Linears = std::vector<std::pair<std::string, AdaptableLinear>>;

// The adaptable maps that `targets` match; strata::Error naming a pattern that matches none.
// option: the setting's name for the message ("lora.targets").
Linears matched(const torch::nn::Module& model, const std::vector<std::string>& targets, const std::string& option) {
  const Linears linears = adaptable_linears(model);
  if (targets.empty()) throw Error(option + ": no target patterns given");
  for (const std::string& pattern : targets) {
    bool found = false;
    for (const auto& [name, linear] : linears) found = found || glob_match(pattern, name);
    if (!found)
      throw Error(option + " " + listed(targets) + ": '" + pattern + "' matches no adaptable linear map" +
                  (linears.empty() ? std::string(" (this model has none)")
                                   : " (their names look like '" + linears.front().first + "')"));
  }
  Linears out;
  for (const auto& item : linears)
    if (matches_any(targets, item.first)) out.push_back(item);
  return out;
}

}  // namespace

Linears adaptable_linears(const torch::nn::Module& model) {
  Linears out;
  for (const auto& item : model.named_modules(/*name_prefix=*/"", /*include_self=*/false))
    if (auto linear = std::dynamic_pointer_cast<AdaptableLinearImpl>(item.value()))
      out.emplace_back(item.key(), AdaptableLinear(linear));
  return out;
}

AdapterReport add_lora(torch::nn::Module& model, const LoraOptions& options) {
  options.settings.check();
  Linears targets = matched(model, options.targets, "lora.targets");
  for (const auto& [name, linear] : targets)
    if (linear->has_lora()) throw Error("lora: " + name + " has LoRA already");
  AdapterReport report;
  for (auto& [name, linear] : targets) {
    linear->add_lora(options.settings);
    report.modules.push_back(name);
    report.parameters += linear->lora_A.numel() + linear->lora_B.numel();
  }
  return report;
}

AdapterReport add_bottleneck(torch::nn::Module& model, const BottleneckOptions& options) {
  options.settings.check();
  Linears targets = matched(model, options.targets, "bottleneck.targets");
  for (const auto& [name, linear] : targets)
    if (linear->bottleneck) throw Error("bottleneck: " + name + " has a bottleneck adapter already");
  AdapterReport report;
  for (auto& [name, linear] : targets) {
    linear->add_bottleneck(options.settings);
    report.modules.push_back(name);
    for (const at::Tensor& p : linear->bottleneck->parameters()) report.parameters += p.numel();
  }
  return report;
}

std::vector<std::string> merge_lora(torch::nn::Module& model, LoraMerge mode) {
  std::vector<std::string> merged;
  bool any = false;
  for (auto& [name, linear] : adaptable_linears(model)) {
    if (!linear->has_lora()) continue;
    any = true;
    if (!linear->lora_merged()) {
      linear->merge_lora();
      merged.push_back(name);
    }
    if (mode == LoraMerge::Unload) linear->remove_lora();
  }
  if (!any) throw Error("merging LoRA: the model has no LoRA");
  if (merged.empty() && mode == LoraMerge::KeepAdapter) throw Error("merging LoRA: every LoRA is merged already");
  return merged;
}

std::vector<std::string> unmerge_lora(torch::nn::Module& model) {
  std::vector<std::string> unmerged;
  for (auto& [name, linear] : adaptable_linears(model))
    if (linear->has_lora() && linear->lora_merged()) {
      linear->unmerge_lora();
      unmerged.push_back(name);
    }
  if (unmerged.empty()) throw Error("unmerging LoRA: the model has no merged LoRA (merge with LoraMerge::KeepAdapter)");
  return unmerged;
}

bool is_adapter_parameter(std::string_view name) {
  for (const auto* patterns : kAllPatterns)
    if (matches_any(*patterns, name)) return true;
  return false;
}

std::vector<std::string> adapter_parameter_names(const torch::nn::Module& model) {
  std::vector<std::string> out;
  for (const auto& item : model.named_parameters())
    if (is_adapter_parameter(item.key())) out.push_back(item.key());
  return out;
}

std::vector<std::string> adapter_patterns(const torch::nn::Module& model) {
  const std::vector<std::string> names = adapter_parameter_names(model);
  std::vector<std::string> out;
  for (const auto* patterns : kAllPatterns)
    if (std::any_of(names.begin(), names.end(), [&](const std::string& name) { return matches_any(*patterns, name); }))
      out.insert(out.end(), patterns->begin(), patterns->end());
  if (out.empty())
    throw Error("the model has no adapters to train (add LoRA or bottleneck adapters, or build it with prefixes or PALs)");
  return out;
}

bool has_linear_adapters(const torch::nn::Module& model) {
  for (const auto& [name, linear] : adaptable_linears(model))
    if (linear->has_lora() || linear->bottleneck) return true;
  return false;
}

}  // namespace strata::nn
