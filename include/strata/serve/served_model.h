#pragma once
// The model `strata serve` answers with: a trained run loaded once and shared by the worker
// threads. A language model (causal_lm, bst_lm) continues prompts; a seq2seq model or an
// extractive model (sent_clf, sent_ptr, an extractive encoder) summarizes documents. Decoding follows the request: greedy at temperature 0, else sampling with its
// temperature, top_p and top_k; n choices of one prompt decode together as one batch of n rows.
// libtorch stays behind this header so that the HTTP side compiles without it.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/serve/openai_protocol.h"

namespace strata {
struct Document;
}  // namespace strata

namespace strata::serve {

// What to write for one prompt.
struct GenerationJob {
  std::string prompt;
  std::int64_t n = 1;
  std::int64_t max_tokens = 16;
  double temperature = 1.0;
  double top_p = 1.0;
  std::int64_t top_k = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> stop;
};

// Text of choice `index` as it settles; finish_reason is set on the choice's last call.
using ChoiceSink =
    std::function<void(std::int64_t index, const std::string& text, const std::optional<std::string>& finish_reason)>;

struct GenerationResult {
  std::vector<ChoiceResult> choices;
  Usage usage;
};

class ServedModel {
 public:
  // strata::Error for a path that holds no model, or a model that neither generates nor
  // summarizes (an encoder). Each request decodes with `threads` intra-op threads (0: the
  // library's default).
  ServedModel(const std::filesystem::path& model, const std::filesystem::path& adapter, int threads = 0);
  ~ServedModel();

  const std::string& architecture() const;
  bool continues_text() const;  // /v1/completions and /v1/chat/completions
  bool summarizes() const;      // /v1/summarize
  std::int64_t context_tokens() const;  // the longest prompt plus output the model takes
  std::int64_t count_tokens(const std::string& text) const;
  // ApiError 400 context_length_exceeded when the prompt and the output asked for overflow the
  // context; the server checks before a request takes a worker, complete() again for any caller.
  void check_fits(std::int64_t prompt_tokens, std::int64_t max_tokens) const;

  // Decodes job.n choices of job.prompt. `keep_going` is asked after every step; false stops
  // decoding (the choices then end with "length"). Safe to call from several threads.
  GenerationResult complete(const GenerationJob& job, const ChoiceSink& sink,
                            const std::function<bool()>& keep_going) const;

  // Summaries of documents (Markdown, man or plain text, detected). A seq2seq model decodes
  // greedily or with beam search as the run's [decode] section says, at most max_tokens tokens
  // each; an extractive model returns the sentences it picks (the run's extract.* settings),
  // one per line in document order, and max_tokens does not apply.
  std::vector<std::string> summarize(const std::vector<std::string>& documents, std::int64_t max_tokens) const;

 private:
  std::vector<std::string> extract(const std::vector<Document>& documents) const;

  struct Loaded;
  std::unique_ptr<Loaded> loaded_;
  int threads_;
};

}  // namespace strata::serve
