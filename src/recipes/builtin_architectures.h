#pragma once
// The architectures strata ships, one file each (seq2seq_architecture.cpp, ...), and what
// their task makers share.
#include <cstdio>
#include <vector>

#include "strata/data/train_fraction.h"
#include "strata/recipes/architectures.h"
#include "strata/train/run_config.h"

namespace strata::recipes {

// Every built-in architecture, in the order --help lists them.
std::vector<Architecture> builtin_architectures();

Architecture seq2seq_architecture();
Architecture causal_lm_architecture();
Architecture bst_lm_architecture();
Architecture encoder_architecture();
Architecture ca_mtl_architecture();
Architecture sent_clf_architecture();
Architecture sent_ptr_architecture();

// The training set cut to data.train_fraction, saying so when it is cut.
template <class Example>
std::vector<Example> keep_fraction(std::vector<Example> train_set, const train::DataOptions& options) {
  if (options.train_fraction == 1.0 || train_set.empty()) return train_set;
  const std::size_t all = train_set.size();
  train_set = keep_train_fraction(std::move(train_set), options.train_fraction, options.fraction_seed);
  std::printf("data: using %zu of %zu training examples (train_fraction %g)\n", train_set.size(), all,
              options.train_fraction);
  return train_set;
}

// strata::Error when data.task is denoise, which pretrains seq2seq models only.
void reject_denoising(const TaskInputs& inputs, const std::string& architecture);

}  // namespace strata::recipes
