// The language-model families: causal_lm (GPT-2-like) and bst_lm (Block-State Transformer).
// Both train on blocks of text (train::LmTask) and continue prompts (decode::CausalLmStepper);
// data.task = tlm makes the blocks thesis ch. 2's formatted summarisation sequences.
#include <torch/torch.h>

#include "builtin_architectures.h"
#include "strata/data/lm_examples.h"
#include "strata/data/tlm_examples.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/bst_lm.h"
#include "strata/models/causal_lm.h"
#include "strata/train/lm_task.h"

namespace strata::recipes {

namespace {

// Any language model trains and decodes this way, whichever architecture built it.
std::shared_ptr<models::LanguageModel> language_model(const std::shared_ptr<torch::nn::Module>& module) {
  auto lm = std::dynamic_pointer_cast<models::LanguageModel>(module);
  if (!lm) throw_wrong_model("language model (models::LanguageModel)");
  return lm;
}

std::unique_ptr<train::TrainTask> make_lm_task(std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) {
  reject_denoising(in, in.model.architecture);
  const train::DataOptions options = train::data_options(in.run);
  const bool tlm = in.run.get<std::string>("data.task") == "tlm";
  const TlmFormat format = tlm ? train::tlm_format(in.run) : TlmFormat{};
  const TlmExtracts extracts = tlm ? TlmExtracts::parse(in.run.get<std::string>("tlm.extracts")) : TlmExtracts{};
  auto load = [&](const std::filesystem::path& path) {
    if (path.empty()) return train::TokenBlocks{};
    return tlm ? load_tlm_windows(path, in.tokenizer, format, extracts, !in.quiet)
               : load_lm_chunks({path}, in.tokenizer, options.block_size, !in.quiet, options.blocking);
  };
  train::TokenBlocks train_set = keep_fraction(load(in.train), options), valid_set = load(in.valid);
  std::printf("data: %zu training and %zu validation blocks of %zu tokens\n", train_set.size(), valid_set.size(),
              options.block_size);
  return std::make_unique<train::LmTask>(language_model(module), std::move(train_set),
                                         std::move(valid_set));
}

std::unique_ptr<decode::StepModel> lm_stepper(std::shared_ptr<torch::nn::Module> module, const DecodeInputs& in) {
  return std::make_unique<decode::CausalLmStepper>(language_model(module), in.ids, in.use_cache, in.padding);
}

}  // namespace

Architecture causal_lm_architecture() {
  return {"causal_lm", "GPT-2-like decoder-only language model",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::CausalLm(config).ptr();
          },
          make_lm_task, lm_stepper};
}

Architecture bst_lm_architecture() {
  return {"bst_lm", "Block-State Transformer language model (thesis ch. 5): SLIDE layers, BST layers at model.bst_layers",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::BstLm(config).ptr();
          },
          make_lm_task, lm_stepper};
}

}  // namespace strata::recipes
