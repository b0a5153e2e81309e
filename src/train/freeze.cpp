#include "strata/train/freeze.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <unordered_set>

#include "strata/core/error.h"
#include "strata/core/strings.h"

namespace strata::train {
namespace {

// 1234567 -> "1,234,567"
std::string with_commas(std::int64_t value) {
  const std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

using NamedParameters = torch::OrderedDict<std::string, at::Tensor>;

// strata::Error naming the first pattern that matches no parameter; `option` names the
// setting in the message ("freeze", "train_only").
void check_patterns_match(const NamedParameters& parameters, const std::vector<std::string>& patterns,
                          const char* option) {
  for (const std::string& pattern : patterns) {
    bool found = false;
    for (const auto& item : parameters) found = found || glob_match(pattern, item.key());
    if (!found) {
      std::string message = option;
      message.append(" pattern '").append(pattern).append("' matches no parameter name");
      if (!parameters.is_empty())
        message.append(" (names look like '").append(parameters.begin()->key()).append("')");
      throw Error(message);
    }
  }
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  for (const std::string& pattern : patterns)
    if (glob_match(pattern, name)) return true;
  return false;
}

// Freezes the parameters whose name matches any pattern (or, with `keep_matches`, none).
std::vector<std::string> freeze_where(torch::nn::Module& module, const std::vector<std::string>& patterns,
                                      bool keep_matches, const char* option) {
  const NamedParameters parameters = module.named_parameters();
  check_patterns_match(parameters, patterns, option);
  std::vector<std::string> frozen;
  for (const auto& item : parameters)
    if (matches_any(patterns, item.key()) != keep_matches) {
      item.value().set_requires_grad(false);
      frozen.push_back(item.key());
    }
  return frozen;
}

}  // namespace


std::vector<std::string> freeze(torch::nn::Module& module, const std::vector<std::string>& patterns) {
  return freeze_where(module, patterns, /*keep_matches=*/false, "freeze");
}

std::vector<std::string> train_only(torch::nn::Module& module, const std::vector<std::string>& patterns) {
  if (patterns.empty()) return {};  // no restriction, as an empty train.train_only means
  return freeze_where(module, patterns, /*keep_matches=*/true, "train_only");
}

ParameterCount count_parameters(const torch::nn::Module& module) {
  ParameterCount count;
  std::unordered_set<const void*> seen;
  for (const at::Tensor& parameter : module.parameters()) {
    if (!seen.insert(parameter.unsafeGetTensorImpl()).second) continue;
    count.total += parameter.numel();
    if (parameter.requires_grad()) count.trainable += parameter.numel();
  }
  return count;
}

std::string describe_parameters(const ParameterCount& count) {
  const double percent =
      count.total == 0 ? 0.0 : 100.0 * static_cast<double>(count.trainable) / static_cast<double>(count.total);
  return fmt::format("trainable params: {} || all params: {} || trainable%: {:.4f}",
                     with_commas(count.trainable), with_commas(count.total), percent);
}

}  // namespace strata::train
