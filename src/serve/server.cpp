#include "strata/serve/server.h"

#include <httplib.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "strata/core/error.h"
#include "strata/serve/admission.h"
#include "strata/serve/served_model.h"
#include "http_listen.h"

namespace strata::serve {

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::uint64_t random_u64() {
  thread_local std::mt19937_64 generator{std::random_device{}()};
  return generator();
}

std::string new_id(const char* prefix) { return fmt::format("{}-{:016x}{:08x}", prefix, random_u64(), random_u64() >> 32); }

std::string dump(const nlohmann::json& body) {
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void send_json(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) { send_json(res, error.status, error_body(error)); }

class Service {
 public:
  Service(const ServedModel& model, const ServerOptions& options)
      : model_(model), options_(options), admission_(options.workers, options.queue) {}

  Admission& admission() { return admission_; }
  void install(httplib::Server& server);

 private:
  // Runs a route, turning every failure into OpenAI's error shape.
  void guarded(httplib::Response& res, const std::function<void()>& route);
  nlohmann::json parse_body(const httplib::Request& req) const;
  void check_model(const std::string& name) const;
  std::shared_ptr<AdmissionTicket> admit(Clock::time_point deadline);
  void fit_to_context(CompletionRequest& request) const;
  GenerationJob job_of(const CompletionRequest& request, std::size_t prompt, std::uint64_t seed) const;

  void completions(const httplib::Request& req, httplib::Response& res, bool chat);
  void stream(httplib::Response& res, CompletionRequest request, std::shared_ptr<AdmissionTicket> ticket,
              Clock::time_point deadline);
  void summarize(const httplib::Request& req, httplib::Response& res);
  nlohmann::json model_card() const;

  // When a request arriving now must be answered: waiting and decoding share the timeout.
  Clock::time_point request_deadline() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options_.request_timeout_seconds));
  }
  ApiError timeout() const {
    return ApiError(504, "timeout", fmt::format("the request ran past the server's limit of {} s (strata serve "
                                                "--request-timeout)", options_.request_timeout_seconds));
  }

  const ServedModel& model_;
  const ServerOptions& options_;
  Admission admission_;
  const std::int64_t started_ = unix_seconds();
};

void Service::guarded(httplib::Response& res, const std::function<void()>& route) {
  try {
    route();
  } catch (const ApiError& e) {
    send_error(res, e);
  } catch (const Error& e) {
    send_error(res, ApiError(400, "invalid_request_error", e.what()));
  } catch (const std::exception& e) {
    send_error(res, ApiError(500, "server_error", std::string("internal error: ") + e.what()));
  }
}

nlohmann::json Service::parse_body(const httplib::Request& req) const {
  try {
    return nlohmann::json::parse(req.body);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
    throw ApiError(400, "invalid_request_error", std::string("the body is not valid JSON: ") + e.what());
  }
}

void Service::check_model(const std::string& name) const {
  if (name != options_.model_name)
    throw ApiError(404, "invalid_request_error",
                   fmt::format("the model '{}' does not exist; this server serves '{}'", name, options_.model_name),
                   "model", "model_not_found");
}

std::shared_ptr<AdmissionTicket> Service::admit(Clock::time_point deadline) {
  switch (admission_.enter(deadline)) {
    case Admission::Outcome::Admitted: return std::make_shared<AdmissionTicket>(admission_);
    case Admission::Outcome::QueueFull:
      throw ApiError(429, "rate_limit_error",
                     fmt::format("the server is busy: {} requests decoding and {} waiting (strata serve --workers, "
                                 "--queue); retry later", options_.workers, options_.queue));
    case Admission::Outcome::ShuttingDown: throw ApiError(503, "server_error", "the server is shutting down");
    case Admission::Outcome::TimedOut: throw timeout();
  }
  throw ApiError(500, "server_error", "admission: unknown outcome");
}

// Refuses prompts over the limits; a default max_tokens (not asked for) shrinks to what the
// context leaves after the longest prompt.
void Service::fit_to_context(CompletionRequest& request) const {
  const std::int64_t limit = options_.max_prompt_tokens > 0 ? options_.max_prompt_tokens : model_.context_tokens();
  const char* param = request.chat ? "messages" : "prompt";
  std::vector<std::int64_t> lengths;
  for (const std::string& prompt : request.prompts) {
    const std::int64_t tokens = model_.count_tokens(prompt);
    if (tokens > limit)
      throw ApiError(400, "invalid_request_error",
                     fmt::format("the prompt has {} tokens; this server takes at most {}", tokens, limit), param,
                     "context_length_exceeded");
    lengths.push_back(tokens);
  }
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  if (!request.max_tokens_given)
    request.max_tokens = std::max<std::int64_t>(1, std::min(request.max_tokens, model_.context_tokens() - longest));
  model_.check_fits(longest, request.max_tokens);
}

GenerationJob Service::job_of(const CompletionRequest& request, std::size_t prompt, std::uint64_t seed) const {
  return {request.prompts[prompt], request.n, request.max_tokens, request.temperature, request.top_p, request.top_k,
          seed + prompt, request.stop};
}

void Service::completions(const httplib::Request& req, httplib::Response& res, bool chat) {
  const nlohmann::json body = parse_body(req);
  CompletionRequest request =
      chat ? parse_chat_request(body, options_.limits) : parse_completion_request(body, options_.limits);
  check_model(request.model);
  if (!model_.continues_text())
    throw ApiError(400, "invalid_request_error",
                   "the served model is a " + model_.architecture() + " summarizer; use POST /v1/summarize", "model");
  fit_to_context(request);
  const Clock::time_point deadline = request_deadline();
  std::shared_ptr<AdmissionTicket> ticket = admit(deadline);
  if (request.stream) return stream(res, std::move(request), std::move(ticket), deadline);

  const std::uint64_t seed = request.seed.value_or(random_u64());
  std::vector<ChoiceResult> choices;
  Usage usage;
  bool expired = false;
  for (std::size_t p = 0; p < request.prompts.size(); ++p) {
    const GenerationResult result = model_.complete(job_of(request, p, seed), {}, [&] {
      expired = Clock::now() >= deadline;
      return !expired;
    });
    if (expired) throw timeout();
    choices.insert(choices.end(), result.choices.begin(), result.choices.end());
    usage.prompt_tokens += result.usage.prompt_tokens;
    usage.completion_tokens += result.usage.completion_tokens;
  }
  const std::string id = new_id(chat ? "chatcmpl" : "cmpl");
  send_json(res, 200,
            chat ? chat_response(id, unix_seconds(), request.model, choices, usage)
                 : completion_response(id, unix_seconds(), request.model, choices, usage));
}

// Server-sent events, written as decoding goes: the whole decode runs in the first call of
// the content provider, after the status line went out. A client that hangs up stops it.
void Service::stream(httplib::Response& res, CompletionRequest request, std::shared_ptr<AdmissionTicket> ticket,
                     Clock::time_point deadline) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  auto state = std::make_shared<CompletionRequest>(std::move(request));
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, state, ticket, deadline](std::size_t, httplib::DataSink& sink) {
        const CompletionRequest& request = *state;
        const std::string id = new_id(request.chat ? "chatcmpl" : "cmpl");
        const std::int64_t created = unix_seconds();
        bool open = true;
        const auto write = [&](const std::string& event) {
          if (open && !sink.write(event.data(), event.size())) open = false;
        };
        const std::uint64_t seed = request.seed.value_or(random_u64());
        Usage usage;
        try {
          for (std::size_t p = 0; p < request.prompts.size() && open; ++p) {
            const std::int64_t first = static_cast<std::int64_t>(p) * request.n;
            if (request.chat)
              for (std::int64_t j = 0; j < request.n; ++j)
                write(sse_event(chat_chunk(id, created, request.model, first + j, "assistant", "", std::nullopt)));
            bool expired = false;
            const GenerationResult result = model_.complete(
                job_of(request, p, seed),
                [&](std::int64_t j, const std::string& text, const std::optional<std::string>& reason) {
                  write(sse_event(request.chat ? chat_chunk(id, created, request.model, first + j, std::nullopt, text, reason)
                                               : completion_chunk(id, created, request.model, first + j, text, reason)));
                },
                [&] {
                  expired = Clock::now() >= deadline;
                  return open && !expired;
                });
            if (expired) throw timeout();
            usage.prompt_tokens += result.usage.prompt_tokens;
            usage.completion_tokens += result.usage.completion_tokens;
          }
          if (request.include_usage) write(sse_event(usage_chunk(id, created, request.model, request.chat, usage)));
        } catch (const ApiError& e) {
          write(sse_event(error_body(e)));
        } catch (const std::exception& e) {
          write(sse_event(error_body(ApiError(500, "server_error", std::string("internal error: ") + e.what()))));
        }
        write(kSseDone);
        sink.done();
        return true;
      });
}

void Service::summarize(const httplib::Request& req, httplib::Response& res) {
  const nlohmann::json body = parse_body(req);
  if (!body.is_object()) throw ApiError(400, "invalid_request_error", "the request body must be a JSON object");
  check_model(body.value("model", ""));
  if (!model_.summarizes())
    throw ApiError(400, "invalid_request_error",
                   "the served model is a " + model_.architecture() + " language model; use POST /v1/completions",
                   "model");
  std::vector<std::string> inputs;
  const auto input = body.find("input");
  if (input != body.end() && input->is_string()) {
    inputs.push_back(input->get<std::string>());
  } else if (input != body.end() && input->is_array() && !input->empty() &&
             static_cast<std::int64_t>(input->size()) <= options_.limits.max_prompts) {
    for (const nlohmann::json& text : *input) {
      if (!text.is_string()) throw ApiError(400, "invalid_request_error", "'input' items must be strings", "input");
      inputs.push_back(text.get<std::string>());
    }
  } else {
    throw ApiError(400, "invalid_request_error",
                   fmt::format("'input' must be a document's text or an array of at most {} of them",
                               options_.limits.max_prompts),
                   "input");
  }
  std::int64_t max_tokens = options_.limits.max_output_tokens;
  if (const auto it = body.find("max_tokens"); it != body.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > max_tokens)
      throw ApiError(400, "invalid_request_error",
                     fmt::format("'max_tokens' must be an integer in [1, {}]", max_tokens), "max_tokens");
    max_tokens = it->get<std::int64_t>();
  }
  const std::shared_ptr<AdmissionTicket> ticket = admit(request_deadline());
  const std::vector<std::string> summaries = model_.summarize(inputs, max_tokens);
  Usage usage;
  nlohmann::json data = nlohmann::json::array();
  for (std::size_t i = 0; i < summaries.size(); ++i) {
    usage.prompt_tokens += model_.count_tokens(inputs[i]);
    usage.completion_tokens += model_.count_tokens(summaries[i]);
    data.push_back({{"index", i}, {"summary", summaries[i]}});
  }
  send_json(res, 200,
            {{"id", new_id("sum")},
             {"object", "summary.list"},
             {"created", unix_seconds()},
             {"model", options_.model_name},
             {"data", data},
             {"usage",
              {{"prompt_tokens", usage.prompt_tokens},
               {"completion_tokens", usage.completion_tokens},
               {"total_tokens", usage.prompt_tokens + usage.completion_tokens}}}});
}

nlohmann::json Service::model_card() const {
  return {{"id", options_.model_name}, {"object", "model"}, {"created", started_}, {"owned_by", "strata"},
          {"architecture", model_.architecture()}, {"context_tokens", model_.context_tokens()},
          {"endpoints", model_.continues_text() ? nlohmann::json{"/v1/completions", "/v1/chat/completions"}
                                                : nlohmann::json{"/v1/summarize"}}};
}

void Service::install(httplib::Server& server) {
  server.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { completions(req, res, false); });
  });
  server.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { completions(req, res, true); });
  });
  server.Post("/v1/summarize", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { summarize(req, res); });
  });
  server.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"object", "list"}, {"data", {model_card()}}});
  });
  server.Get("/v1/models/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] {
      check_model(req.matches[1]);
      send_json(res, 200, model_card());
    });
  });
  server.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const bool stopping = admission_.shutting_down();
    send_json(res, stopping ? 503 : 200,
              {{"status", stopping ? "shutting down" : "ok"}, {"model", options_.model_name},
               {"running", admission_.running()}, {"waiting", admission_.waiting()}});
  });
  install_error_shapes_and_log(server, "strata serve --max-body-bytes", options_.access_log);
}

}  // namespace

void serve(const ServedModel& model, const ServerOptions& options) {
  Service service(model, options);
  httplib::Server server;
  // Enough connection threads for every decoding worker and waiting request, plus a few for
  // /health and for turning the rest away with 429.
  const std::size_t threads = options.workers + options.queue + 4;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(options.max_body_bytes);
  configure_http_server(server);
  service.install(server);
  listen_until_signalled(
      server, "serve", options.host, options.port,
      [&](int port) {
        std::printf("strata serve: listening on http://%s:%d (model '%s', %s; %zu worker%s, queue %zu)\n",
                    options.host.c_str(), port, options.model_name.c_str(), model.architecture().c_str(),
                    options.workers, options.workers == 1 ? "" : "s", options.queue);
      },
      [&] { service.admission().shut_down(); });  // waiting requests get 503; running ones finish
}

}  // namespace strata::serve
