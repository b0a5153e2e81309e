#pragma once
// The assembly floor's loaders in the forms the analyses take them (the analysis floor cannot
// include recipes/): `strata analyze ...` hands these to the functions of src/analysis.
#include <filesystem>

#include "strata/analysis/analysed_seq2seq.h"
#include "strata/analysis/analysed_task.h"

namespace strata::cli {

// An analysis::Seq2SeqLoader: the seq2seq model of a run or checkpoint directory, with a tuned
// prefix file loaded onto it when `prefix` is not empty.
analysis::AnalysedSeq2Seq load_analysed_seq2seq(const std::filesystem::path& path,
                                                const std::filesystem::path& prefix);

// The trained model of `model` inside its training task, `data` its validation split.
analysis::AnalysedTask load_analysed_task(const std::filesystem::path& model, const std::filesystem::path& data,
                                          bool quiet);

}  // namespace strata::cli
