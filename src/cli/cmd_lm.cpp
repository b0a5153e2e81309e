// strata lm eval: perplexity of a causal language model on text.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
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
  models::CausalLm model = recipes::load_causal_lm(flags.model, info, flags.adapter);
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

}  // namespace

void register_lm_eval(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand("eval", "Perplexity of a causal LM on JSONL datasets or text files");
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
