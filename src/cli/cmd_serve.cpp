// strata serve: an OpenAI-compatible HTTP server for a trained model (serve/server.h).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "strata/serve/served_model.h"
#include "strata/serve/server.h"

namespace strata::cli {

namespace {

struct ServeFlags {
  std::string model;
  std::string adapter;
  std::string name;
  int threads = 0;
  serve::ServerOptions server;
};

void run_serve(ServeFlags flags) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = flags.threads > 0 ? flags.threads
                                        : std::max(1, cores / static_cast<int>(std::max<std::size_t>(flags.server.workers, 1)));
  const serve::ServedModel model(flags.model, flags.adapter, threads);
  if (flags.server.model_name.empty())
    flags.server.model_name = std::filesystem::path(flags.model).lexically_normal().filename().string();
  if (flags.server.model_name.empty())  // "--model runs/x/" ends in a slash
    flags.server.model_name = std::filesystem::path(flags.model).lexically_normal().parent_path().filename().string();
  serve::serve(model, flags.server);
}

}  // namespace

void register_serve(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("serve", "Serve a model over HTTP with OpenAI's API (completions, chat, streaming)");
  sub->footer(
      "Endpoints: POST /v1/completions and /v1/chat/completions (language models: causal_lm, bst_lm), POST "
      "/v1/summarize (seq2seq summarizers; {\"model\", \"input\": text or [texts], \"max_tokens\"}), GET /v1/models, "
      "GET /health. Requests name the model by --name. temperature 0 decodes greedily; otherwise sampling with "
      "top_p and top_k (an extension vLLM and llama.cpp share). \"stream\": true sends server-sent events. A chat is "
      "rendered as 'role: content' lines ending in 'assistant:', as the models are trained on plain text.\n"
      "--workers requests decode at once, each with --threads threads (default: the cores shared among workers); n "
      "choices of one prompt decode as one batch. Up to --queue more wait; beyond that a request gets 429. SIGTERM "
      "or Ctrl-C stops accepting, answers waiting requests with 503, lets running ones finish, then exits 0.");
  auto flags = std::make_shared<ServeFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter, "an adapter file to load onto --model, its base")->check(CLI::ExistingFile);
  sub->add_option("--name", flags->server.model_name, "the model id clients send (default: --model's directory name)");
  sub->add_option("--host", flags->server.host, "address to listen on")->capture_default_str();
  sub->add_option("--port", flags->server.port, "port to listen on; 0 picks a free one and prints it")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  sub->add_option("--workers", flags->server.workers, "requests decoded at once")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--threads", flags->threads, "threads per decoding request (0: cores / workers)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--queue", flags->server.queue, "requests that may wait for a worker; more get 429")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  sub->add_option("--max-body-bytes", flags->server.max_body_bytes, "largest request body; larger gets 413")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-prompt-tokens", flags->server.max_prompt_tokens,
                  "longest prompt in tokens (0: the model's context)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--max-output-tokens", flags->server.limits.max_output_tokens,
                  "largest max_tokens a request may ask for, and chat's default")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-choices", flags->server.limits.max_choices, "largest n")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--request-timeout", flags->server.request_timeout_seconds,
                  "seconds a request may wait and decode; past it, 504")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_flag("--quiet", [flags](std::int64_t) { flags->server.access_log = false; }, "no access log on stderr");
  on_run(sub, [flags] { run_serve(*flags); });
}

}  // namespace strata::cli
