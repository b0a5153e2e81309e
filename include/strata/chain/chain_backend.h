#pragma once
// What the chain asks: a language model that completes a text prompt, wherever it runs. The
// thesis ran PaLM; here a backend is any OpenAI-compatible endpoint (chain/openai_backend.h:
// llama.cpp's server, vLLM, a hosted API, `strata serve`) or a strata model loaded in this
// process (make_local_backend), with a cache of responses in front of either
// (chain/response_cache.h).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace strata::chain {

// One completion. The chain's answers are single lines, so generation stops at a newline.
struct CompletionCall {
  std::string prompt;
  std::int64_t max_tokens = 64;
  double temperature = 0;  // 0: greedy
  std::uint64_t seed = 0;
  std::vector<std::string> stop = {"\n"};
};

class ChainBackend {
 public:
  virtual ~ChainBackend() = default;
  // The completion's text. strata::Error when the backend cannot answer (after its retries).
  // Safe to call from several threads at once.
  virtual std::string complete(const CompletionCall& call) = 0;
  // Names the model and the settings that change its answers: the cache keys responses by it,
  // so a different model never gets another's cached answer.
  virtual std::string identity() const = 0;
};

// A trained strata language model (a run directory or checkpoint) decoding in this process
// with `threads` intra-op threads per call (0: the library's default). strata::Error for a
// model that does not continue text.
std::unique_ptr<ChainBackend> make_local_backend(const std::filesystem::path& model, int threads = 0);

}  // namespace strata::chain
