#pragma once
// The architecture registry: a name (model.architecture) maps to how to build the model from
// its config, make its training task, and step it for decoding. Loading a checkpoint is build
// + weights (recipes/loaded_model.h), so it needs nothing of its own. A new model family is one
// registration (register_architecture, or a line in builtin_architectures) plus its own nn/
// and models/ files; nothing else switches on the architecture.
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/config.h"
#include "strata/models/model_config.h"
#include "strata/text/tokenizer.h"

namespace torch::nn {
class Module;
}
namespace strata::attn {
struct TokenLayout;
}
namespace strata::decode {
class StepModel;
}
namespace strata::train {
class TrainTask;
}

namespace strata::recipes {

// What a training task is made from.
struct TaskInputs {
  const Config& run;                 // the validated run config (data.*, the task's own keys)
  const models::ModelConfig& model;  // designs compiled in, token ids from the tokenizer
  const Tokenizer& tokenizer;
  std::filesystem::path train, valid;  // either may be empty (an analysis reads valid only)
  bool quiet = false;                  // no progress bars
};

// What decoding starts from: the source (seq2seq) or the prompts (language models) as token
// ids [B, L] with their padding (true = real; undefined = none) and, for a model whose
// attention reads the structure, the source's layout.
struct DecodeInputs {
  at::Tensor ids, padding;
  const attn::TokenLayout* layout = nullptr;
  bool use_cache = true;
};

using BuildModel = std::function<std::shared_ptr<torch::nn::Module>(const models::ModelConfig&)>;
using MakeTask = std::function<std::unique_ptr<train::TrainTask>(std::shared_ptr<torch::nn::Module>, const TaskInputs&)>;
using MakeStepper =
    std::function<std::unique_ptr<decode::StepModel>(std::shared_ptr<torch::nn::Module>, const DecodeInputs&)>;
// Fills the model config's fields that come from the run's data or task rather than from
// [model] (CA-MTL's task heads from the suite, a masked-LM head's classes from the
// vocabulary), when a training run starts; config.json then holds them, so loading needs
// nothing of this.
using CompleteConfig = std::function<void(models::ModelConfig&, const Config& run)>;

struct Architecture {
  std::string name;     // model.architecture
  std::string summary;  // one line, for --help
  BuildModel build;     // a freshly initialised model of a config of this architecture
  MakeTask make_task;   // its training task (data.task chooses among an architecture's tasks)
  MakeStepper stepper;  // empty for a model that does not generate (an encoder classifier)
  CompleteConfig complete_config = nullptr;  // empty when [model] and the tokenizer say everything
  // Other architectures whose checkpoints may be its train.base_model (ca_mtl starts from a
  // pretrained encoder): tensors load by name, as from a base of its own architecture.
  std::vector<std::string> base_architectures = {};
};

// Adds `architecture`; strata::Error when the name is taken or a function is missing.
void register_architecture(Architecture architecture);
// strata::Error naming the known architectures (and the closest) when `name` is unknown.
const Architecture& find_architecture(std::string_view name);
// Every registered architecture, built-ins first.
std::vector<const Architecture*> architectures();

// The model a config describes, built by its architecture.
std::shared_ptr<torch::nn::Module> build_model(const models::ModelConfig& config);

[[noreturn]] void throw_wrong_model(const std::string& what);

// The typed model inside a built one; strata::Error naming `what` when it is of another type.
template <class Holder>
Holder model_as(const std::shared_ptr<torch::nn::Module>& module, const std::string& what) {
  auto typed = std::dynamic_pointer_cast<typename Holder::ContainedType>(module);
  if (!typed) throw_wrong_model(what);
  return Holder(std::move(typed));
}

}  // namespace strata::recipes
