#pragma once
// `strata serve`: an OpenAI-compatible HTTP server for one strata model.
//   POST /v1/completions, POST /v1/chat/completions  (language models; "stream": true sends
//        server-sent events), POST /v1/summarize (seq2seq summarizers), GET /v1/models,
//        GET /v1/models/{id}, GET /health.
// Requests decode on `workers` threads at once (n choices of a prompt as one batch); up to
// `queue` more wait, and beyond that a request gets 429 at once. SIGTERM or SIGINT stops
// accepting, sends waiting requests away with 503, lets running ones finish, and returns.
#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/serve/openai_protocol.h"

namespace strata::serve {

class ServedModel;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (the one chosen is printed)
  std::string model_name;  // the id clients name in "model"
  std::size_t workers = 1;
  std::size_t queue = 16;
  std::size_t max_body_bytes = 1 << 20;
  std::int64_t max_prompt_tokens = 0;  // 0: the model's context
  RequestLimits limits;
  double request_timeout_seconds = 120;  // waiting and decoding together
  bool access_log = true;                // one line per request on stderr
};

// Serves until SIGTERM or SIGINT. Prints "strata serve: listening on http://HOST:PORT ..." on
// stdout once it accepts connections. strata::Error when the address cannot be bound.
void serve(const ServedModel& model, const ServerOptions& options);

}  // namespace strata::serve
