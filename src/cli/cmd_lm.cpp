// strata lm eval: perplexity of a language model on text; strata lm score: the log-probability
// of every token of one text, as JSONL; strata lm generate: a prompt continued.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "generation_flags.h"
#include "strata/decode/summarize.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/data/lm_examples.h"
#include "strata/train/lm_task.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/run_config.h"

namespace strata::cli {

namespace {

struct LmEvalFlags {
  std::string model;
  std::string adapter;
  std::vector<std::string> data;
  std::size_t max_tokens = 8192;
  bool json = false;
};

void run_lm_eval(const LmEvalFlags& flags) {
  recipes::LoadedModel info;
  const std::shared_ptr<models::LanguageModel> model = recipes::load_language_model(flags.model, info, flags.adapter);
  const std::size_t block_size = train::data_options(info.run).block_size;
  const std::vector<std::filesystem::path> inputs(flags.data.begin(), flags.data.end());
  const train::TokenBlocks blocks = load_lm_chunks(inputs, *info.tokenizer, block_size, !flags.json);
  const double loss = train::lm_loss(*model, blocks, flags.max_tokens);
  std::size_t tokens = 0;
  for (const auto& b : blocks) tokens += b.size() - 1;
  if (flags.json) {
    std::printf("%s\n", nlohmann::json{{"loss", loss}, {"perplexity", std::exp(loss)}, {"tokens", tokens},
                                       {"blocks", blocks.size()}, {"block_size", block_size}}
                            .dump()
                            .c_str());
    return;
  }
  std::printf("%zu tokens in %zu blocks of %zu: loss %.4f nats/token, perplexity %.2f\n", tokens, blocks.size(),
              block_size, loss, std::exp(loss));
}

struct LmScoreFlags {
  std::string model;
  std::string adapter;
  std::string text;
  std::string out;
  std::size_t window = 0;
};

// One JSON line a token after the first: its position, id, text and log-probability given
// every token before it; then perplexity on stderr (stdout holds the lines unless --out).
void run_lm_score(const LmScoreFlags& flags) {
  recipes::LoadedModel info;
  const std::shared_ptr<models::LanguageModel> model = recipes::load_language_model(flags.model, info, flags.adapter);
  const std::vector<std::int32_t> ids = info.tokenizer->encode(read_file(flags.text));
  const train::TokenScores scores = train::token_log_probs(*model, ids, flags.window);
  const std::vector<double>& log_probs = scores.log_probs;
  std::string lines;
  double total = 0;
  for (std::size_t i = 0; i < log_probs.size(); ++i) {
    const std::int32_t id = ids[i + 1];
    lines += nlohmann::json{{"position", i + 1}, {"token", id}, {"text", info.tokenizer->decode({&ids[i + 1], 1})},
                            {"logprob", log_probs[i]}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             "\n";
    total -= log_probs[i];
  }
  if (flags.out.empty())
    std::fputs(lines.c_str(), stdout);
  else
    write_file_atomic(flags.out, lines);
  const double loss = total / static_cast<double>(std::max<std::size_t>(log_probs.size(), 1));
  std::fprintf(stderr, "%zu tokens scored%s: loss %.4f nats/token, perplexity %.2f\n", log_probs.size(),
               scores.window > 0 ? (" in windows of " + std::to_string(scores.window)).c_str() : " in one pass", loss,
               std::exp(loss));
}

struct LmGenerateFlags {
  std::string model;
  std::string adapter;
  std::string prompt;
  std::string prompt_file;
  bool json = false;
};

// The prompt and its continuation on stdout (or one JSON object); the speed on stderr.
void run_lm_generate(const LmGenerateFlags& flags, const GenerationFlags& generation) {
  recipes::LoadedModel info;
  (void)recipes::load_language_model(flags.model, info, flags.adapter);
  const std::string prompt = flags.prompt_file.empty() ? flags.prompt : read_file(flags.prompt_file);
  const std::vector<std::int32_t> ids = info.tokenizer->encode(prompt);
  if (ids.empty()) throw Error("lm generate: the prompt has no tokens");
  const at::Tensor prompts = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end())).unsqueeze(0);
  const decode::GenerationOptions options = decode::with_model_tokens(generation_for(generation, info), info.config);
  const auto start = std::chrono::steady_clock::now();
  recipes::ContinueTiming timing;
  const std::vector<std::int64_t> tokens =
      recipes::continue_prompts(info, prompts, options, !generation.no_cache, &timing).front();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::int32_t> kept;
  for (std::int64_t t : tokens)
    if (t != options.eos_id) kept.push_back(static_cast<std::int32_t>(t));
  const std::string text = info.tokenizer->decode(kept);
  const double per_second = static_cast<double>(tokens.size()) / std::max(seconds, 1e-9);
  // The steps after the first, which read the prompt: the rate a longer continuation tends to.
  const double later_seconds = seconds - timing.first_step_seconds;
  const nlohmann::json decode_rate =
      timing.steps > 1 ? nlohmann::json(static_cast<double>(timing.steps - 1) / std::max(later_seconds, 1e-9))
                       : nlohmann::json(nullptr);
  if (flags.json)
    std::printf("%s\n", nlohmann::json{{"prompt_tokens", ids.size()}, {"tokens", tokens}, {"text", text},
                                       {"seconds", seconds}, {"tokens_per_second", per_second},
                                       {"first_step_seconds", timing.first_step_seconds}, {"steps", timing.steps},
                                       {"later_steps_per_second", decode_rate}, {"cache", !generation.no_cache}}
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
  else
    std::printf("%s%s\n", prompt.c_str(), text.c_str());
  const std::string later =
      decode_rate.is_null() ? "no later step" : fmt::format("{:.1f} steps/s after it", decode_rate.get<double>());
  std::fprintf(stderr, "%zu tokens after a prompt of %zu in %.2f s (%.1f tokens/s; prompt and first step %.2f s, %s; %s)\n",
               tokens.size(), ids.size(), seconds, per_second, timing.first_step_seconds, later.c_str(),
               generation.no_cache ? "every step recomputed" : "cached");
}

}  // namespace

void register_lm_generate(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand("generate", "Continue a prompt with a language model (causal_lm, bst_lm)");
  sub->footer(
      "Decoding follows the run's [decode] section unless a flag overrides it (greedy by default; --sample with "
      "--top-k, --top-p, --temperature). A causal_lm caches keys and values; a bst_lm caches the keys its next "
      "block reads and carries its state-space model forward (S4D as a recurrence, the unstructured filter by "
      "convolving its inputs again). --no-cache reruns the whole sequence every step, the same tokens slower.");
  auto flags = std::make_shared<LmGenerateFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter, "an adapter file to load onto --model, its base")->check(CLI::ExistingFile);
  auto* text = sub->add_option("--prompt", flags->prompt, "the text to continue");
  sub->add_option("--prompt-file", flags->prompt_file, "read the prompt from this file")
      ->check(CLI::ExistingFile)
      ->excludes(text);
  sub->add_flag("--json", flags->json, "print one JSON object: tokens, text, seconds, tokens_per_second, first_step_seconds (the "
                "prompt read and the first token chosen), steps, later_steps_per_second (the steps after the first)");
  const std::shared_ptr<GenerationFlags> generation = add_generation_flags(sub);
  on_run(sub, [flags, generation] {
    if (flags->prompt.empty() && flags->prompt_file.empty()) throw Error("lm generate: give --prompt or --prompt-file");
    run_lm_generate(*flags, *generation);
  });
}

void register_lm_score(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand(
      "score", "The log-probability of every token of a text given the ones before it, as JSONL (and its perplexity)");
  sub->footer(
      "A model with learned positions (causal_lm) reads the text in consecutive windows of model.max_positions "
      "tokens, each starting afresh; a Block-State Transformer (bst_lm) reads it in one pass, at any length. "
      "Lines: {\"position\", \"token\", \"text\", \"logprob\"} for every token after the first.");
  auto flags = std::make_shared<LmScoreFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter, "an adapter file to load onto --model, its base")->check(CLI::ExistingFile);
  sub->add_option("--text", flags->text, "the text file to score")->required()->check(CLI::ExistingFile);
  sub->add_option("--out", flags->out, "write the JSONL here (write then rename) instead of stdout");
  sub->add_option("--window", flags->window,
                  "read the text in consecutive windows of this many tokens, each starting afresh (default: the "
                  "model's max_positions, or one pass for bst_lm): length generalisation at a fixed length")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1} << 30));
  on_run(sub, [flags] { run_lm_score(*flags); });
}

void register_lm_eval(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand("eval", "Perplexity of a language model (causal_lm, bst_lm) on JSONL datasets or text files");
  auto flags = std::make_shared<LmEvalFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--adapter", flags->adapter,
                  "an adapter file (RUN/adapter.safetensors of a run with --adapter) to load onto --model, its base")
      ->check(CLI::ExistingFile);
  sub->add_option("--data", flags->data, "JSONL datasets, Markdown, man or text files")->required();
  sub->add_option("--max-tokens", flags->max_tokens, "tokens per batch")->capture_default_str();
  sub->add_flag("--json", flags->json, "print one JSON object");
  on_run(sub, [flags] { run_lm_eval(*flags); });
}

}  // namespace strata::cli
