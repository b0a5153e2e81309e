#include "strata/serve/openai_protocol.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

namespace strata::serve {

ApiError::ApiError(int status, std::string type, std::string message, std::string param, std::string code)
    : std::runtime_error(std::move(message)),
      status(status),
      type(std::move(type)),
      param(std::move(param)),
      code(std::move(code)) {}

nlohmann::json error_body(const ApiError& error) {
  const auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"error", {{"message", error.what()}, {"type", error.type}, {"param", or_null(error.param)},
                     {"code", or_null(error.code)}}}};
}

namespace {

ApiError invalid(const std::string& param, const std::string& message, const std::string& code = "") {
  return ApiError(400, "invalid_request_error", message, param, code);
}

// The field when present and not null.
const nlohmann::json* field(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::string string_field(const nlohmann::json& body, const char* name) {
  const nlohmann::json* value = field(body, name);
  if (!value) throw invalid(name, fmt::format("'{}' is required", name), "missing_required_parameter");
  if (!value->is_string()) throw invalid(name, fmt::format("'{}' must be a string", name));
  return value->get<std::string>();
}

double number_field(const nlohmann::json& body, const char* name, double fallback, double low, double high) {
  const nlohmann::json* value = field(body, name);
  if (!value) return fallback;
  if (!value->is_number()) throw invalid(name, fmt::format("'{}' must be a number", name));
  const double x = value->get<double>();
  if (!(x >= low && x <= high)) throw invalid(name, fmt::format("'{}' is {}; it must be in [{}, {}]", name, x, low, high));
  return x;
}

std::int64_t integer_field(const nlohmann::json& body, const char* name, std::int64_t fallback, std::int64_t low,
                           std::int64_t high, const std::string& above_high = "") {
  const nlohmann::json* value = field(body, name);
  if (!value) return fallback;
  if (!value->is_number_integer()) throw invalid(name, fmt::format("'{}' must be an integer", name));
  const std::int64_t x = value->get<std::int64_t>();
  if (x < low) throw invalid(name, fmt::format("'{}' is {}; it must be at least {}", name, x, low));
  if (x > high)
    throw invalid(name, fmt::format("'{}' is {}; it must be at most {}{}", name, x, high, above_high));
  return x;
}

bool bool_field(const nlohmann::json& body, const char* name) {
  const nlohmann::json* value = field(body, name);
  if (!value) return false;
  if (!value->is_boolean()) throw invalid(name, fmt::format("'{}' must be true or false", name));
  return value->get<bool>();
}

// Parameters strata cannot honour: refused when they ask for anything but the default.
void refuse_unsupported(const nlohmann::json& body) {
  const auto refuse = [](const char* name, const std::string& why) {
    throw invalid(name, fmt::format("'{}' is not supported by strata serve: {}", name, why), "unsupported_parameter");
  };
  if (const nlohmann::json* v = field(body, "logprobs"); v && !(v->is_boolean() && !v->get<bool>()))
    refuse("logprobs", "token log-probabilities are not returned (strata lm score gives them)");
  if (const nlohmann::json* v = field(body, "top_logprobs"); v && !(v->is_number() && v->get<double>() == 0))
    refuse("top_logprobs", "token log-probabilities are not returned");
  if (bool_field(body, "echo")) refuse("echo", "the prompt is not repeated in the output");
  if (field(body, "suffix")) refuse("suffix", "the models continue text; they do not fill in the middle");
  if (const nlohmann::json* v = field(body, "logit_bias"); v && !v->empty()) refuse("logit_bias", "no logit biases");
  for (const char* penalty : {"presence_penalty", "frequency_penalty"})
    if (const nlohmann::json* v = field(body, penalty); v && !(v->is_number() && v->get<double>() == 0))
      refuse(penalty, "no repetition penalties (0 only)");
  for (const char* tooling : {"tools", "functions", "tool_choice", "function_call"})
    if (const nlohmann::json* v = field(body, tooling); v && !(v->is_array() && v->empty()) && *v != "none")
      refuse(tooling, "the models do not call tools");
  if (const nlohmann::json* v = field(body, "response_format"); v && !(v->is_object() && v->value("type", "") == "text"))
    refuse("response_format", "only plain text is written");
}

void parse_common(const nlohmann::json& body, const RequestLimits& limits, CompletionRequest& request) {
  refuse_unsupported(body);
  request.model = string_field(body, "model");
  request.temperature = number_field(body, "temperature", 1.0, 0.0, 2.0);
  request.top_p = number_field(body, "top_p", 1.0, 0.0, 1.0);
  if (request.top_p <= 0) throw invalid("top_p", "'top_p' must be above 0");
  request.top_k = integer_field(body, "top_k", 0, 0, std::numeric_limits<std::int32_t>::max());
  request.n = integer_field(body, "n", 1, 1, limits.max_choices, " (strata serve --max-choices)");
  if (const nlohmann::json* best_of = field(body, "best_of");
      best_of && !(best_of->is_number_integer() && best_of->get<std::int64_t>() == request.n))
    throw invalid("best_of", "'best_of' is not supported by strata serve (leave it out, or equal to n)",
                  "unsupported_parameter");
  if (const nlohmann::json* seed = field(body, "seed")) {
    if (!seed->is_number_integer()) throw invalid("seed", "'seed' must be an integer");
    request.seed = seed->is_number_unsigned() ? seed->get<std::uint64_t>()
                                              : static_cast<std::uint64_t>(seed->get<std::int64_t>());
  }
  if (const nlohmann::json* stop = field(body, "stop")) {
    if (stop->is_string()) {
      request.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      for (const nlohmann::json& s : *stop) {
        if (!s.is_string()) throw invalid("stop", "'stop' must be a string or an array of strings");
        request.stop.push_back(s.get<std::string>());
      }
    } else {
      throw invalid("stop", "'stop' must be a string or an array of strings");
    }
    if (static_cast<std::int64_t>(request.stop.size()) > limits.max_stop_strings)
      throw invalid("stop", fmt::format("'stop' has {} strings; at most {}", request.stop.size(), limits.max_stop_strings));
    for (const std::string& s : request.stop)
      if (s.empty()) throw invalid("stop", "'stop' strings must not be empty");
  }
  request.stream = bool_field(body, "stream");
  if (const nlohmann::json* options = field(body, "stream_options")) {
    if (!request.stream) throw invalid("stream_options", "'stream_options' is only allowed with 'stream': true");
    if (!options->is_object()) throw invalid("stream_options", "'stream_options' must be an object");
    request.include_usage = bool_field(*options, "include_usage");
  }
}

std::string message_content(const nlohmann::json& content, std::size_t index) {
  const std::string param = fmt::format("messages[{}].content", index);
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) throw invalid(param, "a message's content must be a string or an array of text parts");
  std::string text;
  for (const nlohmann::json& part : content) {
    if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") || !part["text"].is_string())
      throw invalid(param, "only text parts ({\"type\": \"text\", \"text\": ...}) are supported");
    text += part["text"].get<std::string>();
  }
  return text;
}

}  // namespace

CompletionRequest parse_completion_request(const nlohmann::json& body, const RequestLimits& limits) {
  if (!body.is_object()) throw invalid("", "the request body must be a JSON object");
  CompletionRequest request;
  parse_common(body, limits, request);
  const nlohmann::json* prompt = field(body, "prompt");
  if (!prompt) throw invalid("prompt", "'prompt' is required", "missing_required_parameter");
  if (prompt->is_string()) {
    request.prompts.push_back(prompt->get<std::string>());
  } else if (prompt->is_array() && !prompt->empty()) {
    for (const nlohmann::json& p : *prompt) {
      if (!p.is_string())
        throw invalid("prompt", "'prompt' must be a string or an array of strings (token-id prompts are not supported)");
      request.prompts.push_back(p.get<std::string>());
    }
  } else {
    throw invalid("prompt", "'prompt' must be a string or a non-empty array of strings");
  }
  if (static_cast<std::int64_t>(request.prompts.size()) > limits.max_prompts)
    throw invalid("prompt", fmt::format("{} prompts in one request; at most {}", request.prompts.size(), limits.max_prompts));
  request.max_tokens = integer_field(body, "max_tokens", std::min<std::int64_t>(16, limits.max_output_tokens), 1,
                                     limits.max_output_tokens, " (strata serve --max-output-tokens)");
  request.max_tokens_given = field(body, "max_tokens") != nullptr;
  return request;
}

CompletionRequest parse_chat_request(const nlohmann::json& body, const RequestLimits& limits) {
  if (!body.is_object()) throw invalid("", "the request body must be a JSON object");
  CompletionRequest request;
  request.chat = true;
  parse_common(body, limits, request);
  const nlohmann::json* messages = field(body, "messages");
  if (!messages) throw invalid("messages", "'messages' is required", "missing_required_parameter");
  if (!messages->is_array() || messages->empty()) throw invalid("messages", "'messages' must be a non-empty array");
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const nlohmann::json& m = (*messages)[i];
    if (!m.is_object()) throw invalid(fmt::format("messages[{}]", i), "a message must be an object");
    const std::string role = m.value("role", "");
    if (role != "system" && role != "developer" && role != "user" && role != "assistant")
      throw invalid(fmt::format("messages[{}].role", i),
                    fmt::format("role '{}' is not supported (system, developer, user or assistant)", role));
    if (!m.contains("content") || m["content"].is_null())
      throw invalid(fmt::format("messages[{}].content", i), "a message needs content");
    request.messages.push_back({role == "developer" ? "system" : role, message_content(m["content"], i)});
  }
  const std::int64_t fallback = limits.max_output_tokens;
  const char* name = field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  request.max_tokens =
      integer_field(body, name, fallback, 1, limits.max_output_tokens, " (strata serve --max-output-tokens)");
  request.max_tokens_given = field(body, name) != nullptr;
  request.prompts = {chat_prompt(request.messages)};
  return request;
}

std::string chat_prompt(const std::vector<ChatMessage>& messages) {
  std::string prompt;
  for (const ChatMessage& m : messages) prompt += m.role + ": " + m.content + "\n";
  return prompt + "assistant:";
}

namespace {

nlohmann::json usage_json(const Usage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

nlohmann::json reason_json(const std::optional<std::string>& reason) {
  return reason ? nlohmann::json(*reason) : nlohmann::json(nullptr);
}

nlohmann::json envelope(const std::string& id, const char* object, std::int64_t created, const std::string& model) {
  return {{"id", id}, {"object", object}, {"created", created}, {"model", model}};
}

}  // namespace

nlohmann::json completion_response(const std::string& id, std::int64_t created, const std::string& model,
                                   const std::vector<ChoiceResult>& choices, const Usage& usage) {
  nlohmann::json body = envelope(id, "text_completion", created, model);
  body["choices"] = nlohmann::json::array();
  for (std::size_t i = 0; i < choices.size(); ++i)
    body["choices"].push_back({{"index", i}, {"text", choices[i].text}, {"logprobs", nullptr},
                               {"finish_reason", choices[i].finish_reason}});
  body["usage"] = usage_json(usage);
  return body;
}

nlohmann::json chat_response(const std::string& id, std::int64_t created, const std::string& model,
                             const std::vector<ChoiceResult>& choices, const Usage& usage) {
  nlohmann::json body = envelope(id, "chat.completion", created, model);
  body["choices"] = nlohmann::json::array();
  for (std::size_t i = 0; i < choices.size(); ++i)
    body["choices"].push_back({{"index", i},
                               {"message", {{"role", "assistant"}, {"content", choices[i].text}}},
                               {"logprobs", nullptr},
                               {"finish_reason", choices[i].finish_reason}});
  body["usage"] = usage_json(usage);
  return body;
}

nlohmann::json completion_chunk(const std::string& id, std::int64_t created, const std::string& model,
                                std::int64_t index, const std::string& text,
                                const std::optional<std::string>& finish_reason) {
  nlohmann::json body = envelope(id, "text_completion", created, model);
  body["choices"] = {{{"index", index}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", reason_json(finish_reason)}}};
  return body;
}

nlohmann::json chat_chunk(const std::string& id, std::int64_t created, const std::string& model, std::int64_t index,
                          const std::optional<std::string>& role, const std::string& content,
                          const std::optional<std::string>& finish_reason) {
  nlohmann::json body = envelope(id, "chat.completion.chunk", created, model);
  nlohmann::json delta = nlohmann::json::object();
  if (role) delta["role"] = *role;
  if (role || !content.empty()) delta["content"] = content;
  body["choices"] = {{{"index", index}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", reason_json(finish_reason)}}};
  return body;
}

nlohmann::json usage_chunk(const std::string& id, std::int64_t created, const std::string& model, bool chat,
                           const Usage& usage) {
  nlohmann::json body = envelope(id, chat ? "chat.completion.chunk" : "text_completion", created, model);
  body["choices"] = nlohmann::json::array();
  body["usage"] = usage_json(usage);
  return body;
}

std::string sse_event(const nlohmann::json& data) {
  return "data: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n\n";
}

}  // namespace strata::serve
