#include "analysis_loaders.h"

#include <utility>

#include "strata/recipes/loaded_model.h"

namespace strata::cli {

analysis::AnalysedSeq2Seq load_analysed_seq2seq(const std::filesystem::path& path,
                                                const std::filesystem::path& prefix) {
  recipes::LoadedModel info;
  models::Seq2Seq model = recipes::load_seq2seq(path, info, prefix);
  return {std::move(info.checkpoint), std::move(info.config), std::move(info.run), std::move(info.tokenizer),
          std::move(model)};
}

analysis::AnalysedTask load_analysed_task(const std::filesystem::path& model, const std::filesystem::path& data,
                                          bool quiet) {
  recipes::TrainedTask loaded = recipes::load_trained_task(model, data, quiet);
  return {std::move(loaded.checkpoint), std::move(loaded.tokenizer), std::move(loaded.task)};
}

}  // namespace strata::cli
