#pragma once
// A chain backend that calls an OpenAI-compatible HTTP API: POST {base}/completions, or
// {base}/chat/completions with the prompt as one user message. Failures that may pass
// (connection errors, timeouts, 408, 409, 429 and 5xx) are retried with exponential backoff,
// honouring Retry-After; other errors fail at once with the API's own message.
#include <memory>
#include <string>

#include "strata/chain/chain_backend.h"

namespace strata::chain {

struct OpenAiEndpoint {
  std::string base_url;  // "http://127.0.0.1:8080/v1", "https://api.openai.com/v1"
  std::string model;     // the request's "model" field
  std::string api_key;   // sent as "Authorization: Bearer KEY" when not empty
  bool chat = false;     // /chat/completions instead of /completions
  double timeout_seconds = 60;  // per attempt: connecting, sending and reading each
  int retries = 3;              // attempts after the first
  double backoff_seconds = 0.5;  // first wait; doubles with each retry
};

// strata::Error for a URL that is not http:// or https://.
std::unique_ptr<ChainBackend> make_openai_backend(const OpenAiEndpoint& endpoint);

}  // namespace strata::chain
