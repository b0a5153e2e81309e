#pragma once
// A trained seq2seq model as `strata analyze attention|spectrum|biases` read it. Loading a
// checkpoint is the assembly floor's work (it knows the architectures), so these analyses take
// a loader from their caller.
#include <filesystem>
#include <functional>
#include <memory>

#include "strata/core/config.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"
#include "strata/text/tokenizer.h"

namespace strata::analysis {

struct AnalysedSeq2Seq {
  std::filesystem::path checkpoint;
  models::ModelConfig config;
  Config run;  // the whole config of the run that trained it: how its data was cut
  std::unique_ptr<Tokenizer> tokenizer;
  models::Seq2Seq model{nullptr};  // in eval mode
};

// Loads the seq2seq model of `path` (a run or checkpoint directory) with, when `prefix` is not
// empty, that tuned prefix file loaded onto it; strata::Error for anything else.
using Seq2SeqLoader =
    std::function<AnalysedSeq2Seq(const std::filesystem::path& path, const std::filesystem::path& prefix)>;

}  // namespace strata::analysis
