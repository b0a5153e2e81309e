// strata train / strata lm train: a run from a TOML config with key=value overrides (the run
// `strata pretrain` shares too, train_command.h).
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "train_command.h"
#include "training_tasks.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/models/prefix_file.h"
#include "strata/recipes/recipe.h"
#include "strata/text/tokenizer.h"
#include "strata/train/base_model.h"
#include "strata/train/model_dir.h"
#include "strata/train/freeze.h"
#include "strata/train/run_config.h"
#include "strata/train/trainer.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;

Config effective_config(const TrainFlags& flags) {
  Config config = flags.config.empty() ? Config() : Config::from_toml_file(flags.config);
  if (!flags.recipe.empty())
    for (const std::string& assignment : find_recipe(flags.recipe).overrides) config.apply_override(assignment);
  if (!flags.base.empty()) {
    std::string quoted;  // a TOML basic string, whatever the path holds
    for (char c : flags.base) quoted += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string{c};
    config.apply_override("train.base_model=\"" + quoted + "\"");
  }
  if (flags.train_fraction) config.apply_override(fmt::format("data.train_fraction={}", *flags.train_fraction));
  for (const std::string& assignment : flags.overrides) config.apply_override(assignment);
  for (const std::string& assignment : flags.fixed) config.apply_override(assignment);
  config.validate(train::run_schema());
  return config;
}

// The token ids the model needs, from the tokenizer that feeds it.
models::ModelConfig model_config(const Config& config, const Tokenizer& tokenizer, const std::string& tokenizer_path) {
  models::ModelConfig m = models::ModelConfig::from_config(config);
  auto need = [&](std::optional<std::int32_t> id, const char* what) {
    if (!id) throw Error(tokenizer_path + ": the tokenizer has no " + what + " token, which training needs");
    return static_cast<std::int64_t>(*id);
  };
  m.vocab_size = tokenizer.vocab_size();
  m.pad_id = need(tokenizer.pad_id(), "pad");
  m.eos_id = need(tokenizer.eos_id(), "eos");
  m.bos_id = need(tokenizer.bos_id(), "bos");
  m.decoder_start_id = m.bos_id;
  if (const auto sep = tokenizer.sep_id()) m.marker_id = *sep;
  m.check();
  return m;
}

void print_parameters(torch::nn::Module& model, const std::vector<std::string>& frozen) {
  if (!frozen.empty()) std::printf("frozen: %zu parameter tensors\n", frozen.size());
  std::printf("%s\n", train::describe_parameters(train::count_parameters(model)).c_str());
}

// A prefix-tuned run's prefix as a small file beside it (its best checkpoint's, else its
// latest's), for `strata summarize --model BASE --prefix FILE`. It fits the base only if the
// backbone stayed frozen (train.train_only = ["prefix.*"]): say so when it did not.
void write_prefix(const fs::path& run_dir, const std::string& base) {
  train::LoadedModel info;
  models::Seq2Seq model = train::load_seq2seq(run_dir, info);
  const fs::path file = run_dir / "prefix.safetensors";
  models::save_prefix_file(file, model);
  std::printf("prefix: %s (%.1f KB, from %s)\n", file.string().c_str(), static_cast<double>(fs::file_size(file)) / 1024,
              info.checkpoint.filename().string().c_str());
  if (base.empty()) return;
  train::LoadedModel base_info;
  models::Seq2Seq base_model = train::load_seq2seq(base, base_info);
  if (models::backbone_fingerprint(*base_model) == models::backbone_fingerprint(*model)) {
    std::printf("prefix: loads onto %s with --prefix\n", base.c_str());
  } else {
    std::printf("prefix: the backbone trained too (train.train_only does not hold it to [\"prefix.*\"]), so the "
                "prefix file does not fit %s; use the run itself\n", base.c_str());
  }
}

}  // namespace

void run_train(const TrainFlags& flags, std::optional<models::Architecture> required) {
  const Config config = effective_config(flags);
  if (flags.print_config) {
    std::printf("%s", config.to_toml().c_str());
    return;
  }
  const train::TrainOptions options = train::train_options(config);
  const fs::path tokenizer_path = config.get<std::string>("data.tokenizer");
  if (tokenizer_path.empty()) throw Error("data.tokenizer: no tokenizer given (make one with `strata tokenizer train`)");
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(tokenizer_path);
  const models::ModelConfig m = model_config(config, *tokenizer, tokenizer_path.string());
  if (required && m.architecture != *required)
    throw Error("model.architecture: this command trains " + models::architecture_name(*required) + " models, the config says " +
                models::architecture_name(m.architecture));
  if (flags.out.empty() && flags.config.empty()) throw Error("--out: give the run directory");
  const fs::path run_dir = flags.out.empty() ? fs::path("runs") / fs::path(flags.config).stem() : fs::path(flags.out);
  if (!flags.resume && fs::exists(run_dir / "checkpoints"))
    throw Error(run_dir.string() + " already holds a run: pass --resume to continue it, or choose another --out");

  torch::manual_seed(options.seed);  // initial weights
  const train::DataOptions data = train::data_options(config);
  if (data.train.empty()) throw Error("data.train: no training set given");
  std::unique_ptr<train::TrainTask> task = make_training_task(config, m, *tokenizer, {data.train, data.valid, flags.quiet});
  const std::string base = config.get<std::string>("train.base_model");
  if (!base.empty() && !flags.resume)  // a resumed run's checkpoint holds the weights already
    std::printf("%s\n", train::describe(train::load_base_weights(task->model(), m, base)).c_str());
  std::vector<std::string> frozen = train::freeze(task->model(), options.freeze);
  for (std::string& name : train::train_only(task->model(), options.train_only)) frozen.push_back(std::move(name));
  print_parameters(task->model(), frozen);

  fs::create_directories(run_dir);
  write_file_atomic(run_dir / "config.toml", config.to_toml());
  train::RunInfo run{run_dir, m.to_json(), config.to_json(), tokenizer_path, flags.resume, flags.quiet};
  const train::TrainResult result = train::run_training(*task, options, run);
  std::printf("stopped after %lld steps (%s); last checkpoint %s\n", static_cast<long long>(result.steps),
              result.stop_reason.c_str(), result.last_checkpoint.string().c_str());
  if (result.best_metric)
    std::printf("best %s %.4f at step %lld\n", options.metric.c_str(), *result.best_metric,
                static_cast<long long>(*result.best_step));
  std::printf("metrics: %s (draw them with `strata plot %s`)\n", (run_dir / "metrics.jsonl").string().c_str(),
              run_dir.string().c_str());
  if (m.prefix_length > 0) write_prefix(run_dir, base);
  if (result.stop_reason == "interrupted") throw ExitCode(130);
}

std::shared_ptr<TrainFlags> add_train_flags(CLI::App* sub) {
  auto flags = std::make_shared<TrainFlags>();
  sub->add_option("--config", flags->config, "TOML file with [model], [data], [train] and [decode] sections");
  sub->add_option("--recipe", flags->recipe,
                  "a named system (`strata recipes list`): its settings apply over --config, the overrides over both");
  sub->add_option("--base", flags->base,
                  "a trained run whose weights start this model (train.base_model), e.g. to train PALs on a frozen base");
  sub->add_option("--out", flags->out, "run directory: checkpoints, metrics.jsonl, config.toml (default: runs/<config name>)");
  sub->add_option("--train-fraction", flags->train_fraction,
                  "train on this random share of the training set, 0 < F <= 1 (data.train_fraction; the subset is "
                  "fixed by data.fraction_seed, whatever train.seed)");
  sub->add_flag("--resume", flags->resume, "continue the run in --out from its latest checkpoint");
  sub->add_flag("--print-config", flags->print_config, "print the effective config (defaults filled in) and exit");
  sub->add_flag("--quiet", flags->quiet, "no progress bars");
  sub->add_option("overrides", flags->overrides, "key=value settings that override the file, e.g. train.max_steps=500");
  return flags;
}

void register_train(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("train", "Train a model (seq2seq or extractive summariser, topic segmenter, causal LM) from a TOML config");
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] { run_train(*flags, std::nullopt); });
}

void register_lm_train(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand("train", "Train a causal language model (model.architecture = causal_lm)");
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] { run_train(*flags, models::Architecture::CausalLm); });
}

}  // namespace strata::cli
