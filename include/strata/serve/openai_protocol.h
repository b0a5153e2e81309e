#pragma once
// The OpenAI HTTP API as `strata serve` speaks it: requests of /v1/completions and
// /v1/chat/completions parsed and checked into one CompletionRequest, and the response, stream
// chunk and error bodies built from results. JSON in, JSON out: no model and no HTTP here.
// Field names, defaults and error shapes follow OpenAI's API reference; what strata does not
// support (logprobs, echo, best_of, tools, token-id prompts) is refused by name, never ignored.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::serve {

// An error a client gets as {"error": {"message", "type", "param", "code"}} with `status`.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, std::string message, std::string param = "", std::string code = "");
  int status;
  std::string type;   // invalid_request_error, not_found_error, rate_limit_error, server_error, ...
  std::string param;  // the request field at fault, "" when none
  std::string code;   // a machine-readable reason, "" when none
};
nlohmann::json error_body(const ApiError& error);

// What the server allows a request (strata serve's flags).
struct RequestLimits {
  std::int64_t max_output_tokens = 256;  // max_tokens above this is refused; also the default
  std::int64_t max_choices = 8;          // n
  std::int64_t max_prompts = 16;         // prompts in one /v1/completions request
  std::int64_t max_stop_strings = 4;     // OpenAI's own limit
};

struct ChatMessage {
  std::string role;  // system, user or assistant
  std::string content;
};

// One request of either endpoint, checked: prompts holds the chat's rendered prompt for chat.
struct CompletionRequest {
  bool chat = false;
  std::string model;
  std::vector<std::string> prompts;
  std::vector<ChatMessage> messages;  // chat only
  std::int64_t max_tokens = 16;
  bool max_tokens_given = false;  // false: the default above, which a server may shorten to fit
  double temperature = 1.0;  // 0 = greedy
  double top_p = 1.0;
  std::int64_t top_k = 0;  // not in OpenAI's API; vLLM and llama.cpp accept it
  std::int64_t n = 1;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with usage
};

// strata::serve::ApiError (400, naming the field) for a body that is not a valid request.
// Completions default max_tokens to 16 as OpenAI does; chat to the server's limit.
CompletionRequest parse_completion_request(const nlohmann::json& body, const RequestLimits& limits);
CompletionRequest parse_chat_request(const nlohmann::json& body, const RequestLimits& limits);

// The prompt a causal LM continues for a conversation: one "role: content" line per message,
// then "assistant:" for the reply. strata's language models are trained on plain text, not on
// a chat template; this layout is the plainest a small model can follow.
std::string chat_prompt(const std::vector<ChatMessage>& messages);

struct ChoiceResult {
  std::string text;
  std::string finish_reason;  // "stop" (eos or a stop string) or "length"
};

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
};

// Bodies of a whole (not streamed) response. `id` is the response's id ("cmpl-…", "chatcmpl-…"),
// `created` Unix seconds.
nlohmann::json completion_response(const std::string& id, std::int64_t created, const std::string& model,
                                   const std::vector<ChoiceResult>& choices, const Usage& usage);
nlohmann::json chat_response(const std::string& id, std::int64_t created, const std::string& model,
                             const std::vector<ChoiceResult>& choices, const Usage& usage);

// One server-sent event's data of a stream: new text of choice `index`, with its finish reason
// when it ends (nullopt while it goes on). A chat stream's first chunk of a choice carries the
// role ("assistant") and empty content.
nlohmann::json completion_chunk(const std::string& id, std::int64_t created, const std::string& model,
                                std::int64_t index, const std::string& text,
                                const std::optional<std::string>& finish_reason);
nlohmann::json chat_chunk(const std::string& id, std::int64_t created, const std::string& model, std::int64_t index,
                          const std::optional<std::string>& role, const std::string& content,
                          const std::optional<std::string>& finish_reason);
// The last chunk when stream_options.include_usage: no choices, the usage.
nlohmann::json usage_chunk(const std::string& id, std::int64_t created, const std::string& model, bool chat,
                           const Usage& usage);

// "data: JSON\n\n", and the stream's end "data: [DONE]\n\n".
std::string sse_event(const nlohmann::json& data);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace strata::serve
