// make_local_backend: a strata language model decoding in this process, through the same
// ServedModel that `strata serve` answers with, so both paths decode alike.
#include <fmt/format.h>

#include "strata/chain/chain_backend.h"
#include "strata/core/error.h"
#include "strata/serve/served_model.h"

namespace strata::chain {

namespace {

class LocalBackend : public ChainBackend {
 public:
  LocalBackend(const std::filesystem::path& model, int threads)
      : model_(model, /*adapter=*/{}, threads), identity_(fmt::format("local:{}", std::filesystem::absolute(model).lexically_normal().string())) {
    if (!model_.continues_text())
      throw Error(fmt::format("{}: a {} model does not continue text; the chain needs a language model", model.string(),
                              model_.architecture()));
  }

  std::string complete(const CompletionCall& call) override {
    serve::GenerationJob job;
    job.prompt = call.prompt;
    job.max_tokens = call.max_tokens;
    job.temperature = call.temperature;
    job.seed = call.seed;
    job.stop = call.stop;
    try {
      return model_.complete(job, /*sink=*/nullptr, [] { return true; }).choices.at(0).text;
    } catch (const serve::ApiError& e) {  // the prompt does not fit the model's context
      throw Error(fmt::format("{}: {}", identity_, e.what()));
    }
  }

  std::string identity() const override { return identity_; }

 private:
  serve::ServedModel model_;
  std::string identity_;
};

}  // namespace

std::unique_ptr<ChainBackend> make_local_backend(const std::filesystem::path& model, int threads) {
  return std::make_unique<LocalBackend>(model, threads);
}

}  // namespace strata::chain
