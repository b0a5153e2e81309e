// `strata chain`'s job: the config read and checked, backends made (HTTP or in-process, each
// behind the response cache), every system run, outputs and scores written. Compiled into
// strata_http with the HTTP backend it builds.
#include "strata/chain/chain_job.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "strata/chain/chain_examples.h"
#include "strata/chain/chain_prompts.h"
#include "strata/chain/chain_scores.h"
#include "strata/chain/openai_backend.h"
#include "strata/chain/response_cache.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata::chain {

namespace {

ConfigSchema chain_schema() {
  ConfigSchema schema;
  const ChainRunOptions run;
  schema.add("chain.prompts", std::string(), "prompt file in Appendix C's layout, relative to this file");
  schema.add("chain.language", std::string("fr"), "target language: picks the data's targets; formality rules");
  schema.add("chain.systems", std::vector<std::string>{"no_extra", "with_context", "chain"},
             "systems to run: no_extra, with_context, chain");
  schema.add("chain.corrupt", std::vector<double>{0.0}, "shares of the user's answers replaced by wrong ones");
  schema.add("chain.max_tokens", run.max_tokens, "tokens each step may write");
  schema.add("chain.temperature", run.temperature, "0 decodes greedily");
  schema.add("chain.seed", static_cast<std::int64_t>(run.seed), "decoding seed; also picks corrupted answers");
  schema.add("chain.concurrency", static_cast<std::int64_t>(run.concurrency), "examples in flight at once");
  schema.add("chain.cache", std::string(), "response cache (JSONL), relative to this file; \"\" for none");
  for (const char* role : {"translator", "user", "no_extra", "with_context"}) {
    const BackendSettings b;
    const std::string r = role;
    schema.add(r + ".url", std::string(), "base URL of an OpenAI-compatible API (http://host:port/v1)");
    schema.add(r + ".model", std::string(), "the model name sent to the API");
    schema.add(r + ".api_key_env", b.api_key_env, "environment variable holding the API key");
    schema.add(r + ".chat", b.chat, "use /chat/completions");
    schema.add(r + ".timeout_s", b.timeout_seconds, "seconds per attempt");
    schema.add(r + ".retries", static_cast<std::int64_t>(b.retries), "attempts after the first");
    schema.add(r + ".run", std::string(), "a strata run directory decoded in this process");
    schema.add(r + ".threads", static_cast<std::int64_t>(b.threads), "intra-op threads for run (0: default)");
    if (r == "user") schema.add("user.gold", b.gold, "answer with each example's known answer");
  }
  return schema;
}

bool given(const BackendSettings& b) { return !b.url.empty() || !b.run.empty() || b.gold; }

std::filesystem::path relative_to(const std::filesystem::path& config, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return config.parent_path() / path;
}

BackendSettings backend_settings(const Config& config, const std::filesystem::path& file, const std::string& role) {
  BackendSettings b;
  b.url = config.get<std::string>(role + ".url");
  b.model = config.get<std::string>(role + ".model");
  b.api_key_env = config.get<std::string>(role + ".api_key_env");
  b.chat = config.get<bool>(role + ".chat");
  b.timeout_seconds = config.get<double>(role + ".timeout_s");
  b.retries = static_cast<int>(config.get<std::int64_t>(role + ".retries"));
  b.run = relative_to(file, config.get<std::string>(role + ".run"));
  b.threads = static_cast<int>(config.get<std::int64_t>(role + ".threads"));
  if (role == "user") b.gold = config.get<bool>("user.gold");
  const int choices = !b.url.empty() + !b.run.empty() + b.gold;
  if (choices > 1) throw Error(fmt::format("{}: [{}] give one of url, run or gold, not several", file.string(), role));
  if (choices == 0 && role == "translator")
    throw Error(fmt::format("{}: [translator] needs url (an OpenAI-compatible API) or run (a strata model)", file.string()));
  if (b.timeout_seconds <= 0 || b.retries < 0)
    throw Error(fmt::format("{}: [{}] timeout_s must be positive and retries not negative", file.string(), role));
  return b;
}

// A backend and, when asked, the cache in front of it.
struct Backend {
  std::unique_ptr<ChainBackend> model;
  std::unique_ptr<ResponseCache> cache;
  ChainBackend& get() { return cache ? static_cast<ChainBackend&>(*cache) : *model; }
};

Backend make_backend(const BackendSettings& settings, const std::filesystem::path& cache) {
  Backend backend;
  if (!settings.url.empty()) {
    OpenAiEndpoint endpoint;
    endpoint.base_url = settings.url;
    endpoint.model = settings.model;
    if (const char* key = std::getenv(settings.api_key_env.c_str())) endpoint.api_key = key;
    endpoint.chat = settings.chat;
    endpoint.timeout_seconds = settings.timeout_seconds;
    endpoint.retries = settings.retries;
    backend.model = make_openai_backend(endpoint);
  } else {
    backend.model = make_local_backend(settings.run, settings.threads);
  }
  if (!cache.empty()) backend.cache = std::make_unique<ResponseCache>(*backend.model, cache);
  return backend;
}

std::string variant_name(ChainSystem system, double corrupt) {
  std::string name(chain_system_name(system));
  if (system == ChainSystem::kChain && corrupt > 0) name += fmt::format("-corrupt{:g}", corrupt * 100);
  return name;
}

std::string outputs_jsonl(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& outputs) {
  std::string text;
  for (std::size_t i = 0; i < examples.size(); ++i) {
    const ChainExample& e = examples[i];
    const ChainOutput& o = outputs[i];
    nlohmann::json row = {{"id", e.id}, {"source", e.source}, {"reference", e.reference}, {"translation", o.translation}};
    if (!o.question.empty() || !o.answer.empty()) {
      row["question"] = o.question;
      row["user_answer"] = o.user_answer;
      row["answer"] = o.answer;
      row["corrupted"] = o.corrupted;
      if (!e.answer.empty()) row["right_answer"] = e.answer;
    }
    text += row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  return text;
}

void print_table(const nlohmann::json& scores) {
  std::cout << fmt::format("{:<22} {:>7} {:>7} {:>7} {:>9} {:>9}\n", "system", "BLEU", "chrF", "exact", "formality",
                           "answer");
  const auto cell = [](const nlohmann::json& s, const char* key) {
    return s.contains(key) ? fmt::format("{:.2f}", s[key].get<double>()) : std::string("-");
  };
  for (const auto& [name, s] : scores["systems"].items())
    std::cout << fmt::format("{:<22} {:>7} {:>7} {:>7} {:>9} {:>9}\n", name, cell(s, "bleu"), cell(s, "chrf"),
                             cell(s, "exact_match"), cell(s, "formality_accuracy"), cell(s, "answer_accuracy"));
  // "BLEU +1.20 [-0.40, +2.90] (p = 0.081)": A - B, its interval and the bootstrap's p.
  const auto difference = [](const nlohmann::json& test) {
    return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}] (p = {:.3f})", test["a"].get<double>() - test["b"].get<double>(),
                       test["difference_low"].get<double>(), test["difference_high"].get<double>(),
                       test["p_value"].get<double>());
  };
  for (const auto& [pair, c] : scores["comparisons"].items())
    std::cout << fmt::format("{}: BLEU {}, chrF {}\n", pair, difference(c["bleu"]), difference(c["chrf"]));
}

}  // namespace

ChainJob read_chain_job(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  Config config = Config::from_toml_file(file);
  for (const std::string& assignment : overrides) config.apply_override(assignment);
  config.validate(chain_schema());
  ChainJob job;
  job.prompts = relative_to(file, config.get<std::string>("chain.prompts"));
  if (job.prompts.empty()) throw Error(fmt::format("{}: [chain] prompts is required", file.string()));
  job.language = config.get<std::string>("chain.language");
  for (const std::string& name : config.get<std::vector<std::string>>("chain.systems"))
    job.systems.push_back(parse_chain_system(name));
  if (job.systems.empty()) throw Error(fmt::format("{}: [chain] systems is empty", file.string()));
  job.corrupt = config.get<std::vector<double>>("chain.corrupt");
  if (job.corrupt.empty()) job.corrupt = {0.0};
  for (const double share : job.corrupt)
    if (share < 0 || share >= 1)
      throw Error(fmt::format("{}: [chain] corrupt {} is outside [0, 1)", file.string(), share));
  job.run.max_tokens = config.get<std::int64_t>("chain.max_tokens");
  job.run.temperature = config.get<double>("chain.temperature");
  job.run.seed = static_cast<std::uint64_t>(config.get<std::int64_t>("chain.seed"));
  const std::int64_t concurrency = config.get<std::int64_t>("chain.concurrency");
  if (job.run.max_tokens < 1 || concurrency < 1)
    throw Error(fmt::format("{}: [chain] max_tokens and concurrency must be at least 1", file.string()));
  job.run.concurrency = static_cast<std::size_t>(concurrency);
  job.cache = relative_to(file, config.get<std::string>("chain.cache"));
  job.translator = backend_settings(config, file, "translator");
  job.user = backend_settings(config, file, "user");
  job.no_extra = backend_settings(config, file, "no_extra");
  job.with_context = backend_settings(config, file, "with_context");
  return job;
}

std::string example_chain_config() {
  return R"(# strata chain: the ask -> answer -> translate chain and its baselines (docs/chain.md)
[chain]
prompts = "generalist-fr.txt"     # Appendix C's layout: [ask] [user] [translate] [no-extra] [with-context] [exemplars]
language = "fr"
systems = ["no_extra", "with_context", "chain"]
corrupt = [0.0]                   # e.g. [0.0, 0.1, 0.3, 0.5]: the chain once per share of wrong user answers
max_tokens = 64
temperature = 0.0
seed = 1
concurrency = 4
cache = "responses.jsonl"

[translator]
url = "http://127.0.0.1:8080/v1"  # llama.cpp's server, vLLM, a hosted API, or `strata serve`
model = "my-model"
api_key_env = "OPENAI_API_KEY"
timeout_s = 60.0
retries = 3
# run = "runs/lm"                 # instead of url: a strata language model in this process

[user]
# gold = true                     # a perfect user: each example's known answer
)";
}

nlohmann::json run_chain_job(const ChainJob& job, const std::filesystem::path& data, const std::filesystem::path& out,
                             std::size_t limit, bool quiet) {
  const ChainPrompts prompts = read_chain_prompts(job.prompts);
  ChainData loaded = read_chain_examples(data, job.language);
  std::vector<ChainExample>& examples = loaded.examples;
  if (limit > 0 && examples.size() > limit) examples.resize(limit);
  if (!quiet && loaded.skipped_without_target)
    std::cerr << fmt::format("{} records have no '{}' target and are skipped\n", loaded.skipped_without_target,
                             job.language);

  // Each backend keeps its own cache file beside the translator's (keys carry the backend's
  // identity as well, so a file never answers for another model).
  const auto cache_for = [&](const std::string& role) {
    return job.cache.empty() || role.empty() ? job.cache : std::filesystem::path(job.cache.string() + "." + role);
  };
  Backend translator = make_backend(job.translator, cache_for(""));
  Backend user_backend, no_extra_backend, with_context_backend;
  if (given(job.user) && !job.user.gold) user_backend = make_backend(job.user, cache_for("user"));
  ChainBackend* user = job.user.gold ? nullptr : given(job.user) ? &user_backend.get() : &translator.get();
  const auto translator_for = [&](ChainSystem system) -> ChainBackend& {
    const bool direct = system == ChainSystem::kWithContext;
    const BackendSettings& own = direct ? job.with_context : job.no_extra;
    Backend& backend = direct ? with_context_backend : no_extra_backend;
    if (system == ChainSystem::kChain || !given(own)) return translator.get();
    if (!backend.model) backend = make_backend(own, cache_for(direct ? "with_context" : "no_extra"));
    return backend.get();
  };

  ChainScoreOptions score_options;
  score_options.language = job.language;
  nlohmann::json scores = {{"data", data.string()},
                           {"examples", examples.size()},
                           {"language", job.language},
                           {"prompts", job.prompts.string()},
                           {"translators", nlohmann::json::object()},
                           {"user", job.user.gold ? "gold" : user->identity()},
                           {"systems", nlohmann::json::object()},
                           {"comparisons", nlohmann::json::object()}};
  std::map<std::string, std::vector<ChainOutput>> outputs;
  for (const ChainSystem system : job.systems) {
    const std::vector<double> shares = system == ChainSystem::kChain ? job.corrupt : std::vector<double>{0.0};
    for (const double share : shares) {
      ChainRunOptions options = job.run;
      options.corrupt = share;
      options.quiet = quiet;
      const std::string name = variant_name(system, share);
      ChainBackend& system_translator = translator_for(system);
      scores["translators"][name] = system_translator.identity();
      outputs[name] = run_chain_system(system, examples, prompts, system_translator, user, options);
      write_file_atomic(out / "outputs" / (name + ".jsonl"), outputs_jsonl(examples, outputs[name]));
      scores["systems"][name] = score_chain_system(examples, outputs[name], score_options);
    }
  }
  // Every chain against every baseline, and the two baselines against each other.
  for (const auto& [a, a_outputs] : outputs)
    for (const auto& [b, b_outputs] : outputs) {
      const bool a_chain = a.starts_with("chain"), b_chain = b.starts_with("chain");
      if ((a_chain && !b_chain) || (a == "with_context" && b == "no_extra"))
        scores["comparisons"][a + " vs " + b] = compare_chain_systems(examples, a_outputs, b_outputs, score_options);
    }
  if (translator.cache) scores["cache"] = {{"hits", translator.cache->hits()}, {"misses", translator.cache->misses()}};
  write_file_atomic(out / "scores.json", scores.dump(2) + "\n");
  if (!quiet) print_table(scores);
  return scores;
}

}  // namespace strata::chain
