// The chain's HTTP backend (chain/openai_backend.h). Compiled into strata_http with
// cpp-httplib's definitions; no libtorch here.
#include "strata/chain/openai_backend.h"

#include <httplib.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata::chain {

namespace {

// "https://host:port/v1" -> ("https://host:port", "/v1").
std::pair<std::string, std::string> split_url(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || (url.compare(0, scheme_end, "http") != 0 && url.compare(0, scheme_end, "https") != 0))
    throw Error(fmt::format("backend url '{}': give http://HOST[:PORT]/PATH or https://...", url));
  const std::size_t path_start = url.find('/', scheme_end + 3);
  if (path_start == std::string::npos) return {url, ""};
  std::string path = url.substr(path_start);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return {url.substr(0, path_start), path};
}

bool may_pass(int status) { return status == 408 || status == 409 || status == 429 || status >= 500; }

// The API's own message from {"error": {"message": ...}}, else the body's start.
std::string error_message(const std::string& body) {
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object() &&
      parsed["error"].contains("message") && parsed["error"]["message"].is_string())
    return parsed["error"]["message"].get<std::string>();
  return body.substr(0, 200);
}

class OpenAiBackend : public ChainBackend {
 public:
  explicit OpenAiBackend(OpenAiEndpoint endpoint) : endpoint_(std::move(endpoint)) {
    std::tie(origin_, path_) = split_url(endpoint_.base_url);
    path_ += endpoint_.chat ? "/chat/completions" : "/completions";
  }

  std::string complete(const CompletionCall& call) override {
    const std::string body = request_body(call).dump();
    std::string failure;
    for (int attempt = 0; attempt <= endpoint_.retries; ++attempt) {
      double wait = endpoint_.backoff_seconds * std::pow(2.0, attempt);
      // A client per call: httplib's Client is not meant for several threads at once.
      httplib::Client client(origin_);
      const auto timeout = std::chrono::duration<double>(endpoint_.timeout_seconds);
      client.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
      client.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
      client.set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
      httplib::Headers headers;
      if (!endpoint_.api_key.empty()) headers.emplace("Authorization", "Bearer " + endpoint_.api_key);
      const httplib::Result result = client.Post(path_, headers, body, "application/json");
      if (!result) {
        failure = fmt::format("no response ({})", httplib::to_string(result.error()));
      } else if (result->status == 200) {
        return response_text(result->body);
      } else {
        failure = fmt::format("HTTP {}: {}", result->status, error_message(result->body));
        if (!may_pass(result->status)) break;
        if (result->has_header("Retry-After")) {
          const double asked = std::atof(result->get_header_value("Retry-After").c_str());
          if (asked > 0) wait = std::min(asked, 60.0);
        }
      }
      if (attempt < endpoint_.retries) std::this_thread::sleep_for(std::chrono::duration<double>(wait));
    }
    throw Error(fmt::format("{}{}: {}", origin_, path_, failure));
  }

  std::string identity() const override {
    return fmt::format("openai:{}{}:{}", origin_, path_, endpoint_.model);
  }

 private:
  nlohmann::json request_body(const CompletionCall& call) const {
    nlohmann::json body = {{"model", endpoint_.model},
                           {"max_tokens", call.max_tokens},
                           {"temperature", call.temperature},
                           {"seed", call.seed}};
    if (!call.stop.empty()) body["stop"] = call.stop;
    if (endpoint_.chat)
      body["messages"] = nlohmann::json::array({{{"role", "user"}, {"content", call.prompt}}});
    else
      body["prompt"] = call.prompt;
    return body;
  }

  std::string response_text(const std::string& body) const {
    const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    const char* field = endpoint_.chat ? "/choices/0/message/content" : "/choices/0/text";
    const nlohmann::json::json_pointer pointer(field);
    if (parsed.is_discarded() || !parsed.contains(pointer) || !parsed[pointer].is_string())
      throw Error(fmt::format("{}{}: the response has no {} string: {}", origin_, path_, field, body.substr(0, 200)));
    return parsed[pointer].get<std::string>();
  }

  OpenAiEndpoint endpoint_;
  std::string origin_, path_;
};

}  // namespace

std::unique_ptr<ChainBackend> make_openai_backend(const OpenAiEndpoint& endpoint) {
  return std::make_unique<OpenAiBackend>(endpoint);
}

}  // namespace strata::chain
