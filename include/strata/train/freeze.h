#pragma once
// Freezing parameters by name pattern, and counting what is left to train.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace torch::nn {
class Module;
}

namespace strata::train {


// Sets requires_grad = false on every parameter whose name matches one of the patterns and
// returns the matched names in module order. A pattern that matches no parameter is a
// strata::Error naming it (a typo would otherwise freeze nothing, silently).
std::vector<std::string> freeze(torch::nn::Module& module, const std::vector<std::string>& patterns);

// The converse: sets requires_grad = false on every parameter whose name matches none of the
// patterns (training only an adapter, say "*.pal.*", on a frozen base model) and returns the
// frozen names in module order. No patterns: nothing is frozen. A pattern that matches no
// parameter is a strata::Error naming it.
std::vector<std::string> train_only(torch::nn::Module& module, const std::vector<std::string>& patterns);

struct ParameterCount {
  std::int64_t trainable = 0;
  std::int64_t total = 0;
};

// Elements of the module's parameters, each tensor counted once (tied weights are shared).
ParameterCount count_parameters(const torch::nn::Module& module);

// "trainable params: 1,234 || all params: 5,678 || trainable%: 21.7330", as HF PEFT's
// print_trainable_parameters.
std::string describe_parameters(const ParameterCount& count);

}  // namespace strata::train
