#include "builtin_architectures.h"

#include "strata/core/error.h"

namespace strata::recipes {

std::vector<Architecture> builtin_architectures() {
  return {seq2seq_architecture(), causal_lm_architecture(), encoder_architecture(), bst_lm_architecture(), ca_mtl_architecture(),
          sent_clf_architecture(), sent_ptr_architecture()};
}

void reject_denoising(const TaskInputs& inputs, const std::string& architecture) {
  if (inputs.run.get<std::string>("data.task") == "denoise")
    throw Error("data.task: denoise pretrains seq2seq models (`strata pretrain`), this model is " + architecture);
}

}  // namespace strata::recipes
