// strata train / strata lm train: a run from a TOML config with key=value overrides (the run
// `strata pretrain` shares too, train_command.h).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "train_command.h"
#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/recipes/adapters.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/recipe.h"
#include "strata/recipes/training_run.h"
#include "strata/train/process_group.h"
#include "strata/train/worker_launch.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;

Config effective_config(const TrainFlags& flags) {
  Config config = flags.config.empty() ? Config() : Config::from_toml_file(flags.config);
  if (!flags.recipe.empty())
    for (const std::string& assignment : recipes::find_recipe(flags.recipe).overrides) config.apply_override(assignment);
  if (!flags.base.empty()) {
    std::string quoted;  // a TOML basic string, whatever the path holds
    for (char c : flags.base) quoted += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string{c};
    config.apply_override("train.base_model=\"" + quoted + "\"");
  }
  if (!flags.adapter.empty()) config.apply_override(fmt::format("adapter.name=\"{}\"", flags.adapter));
  if (flags.train_fraction) config.apply_override(fmt::format("data.train_fraction={}", *flags.train_fraction));
  for (const std::string& assignment : flags.overrides) config.apply_override(assignment);
  for (const std::string& assignment : flags.fixed) config.apply_override(assignment);
  config.validate(recipes::run_schema());
  if (flags.fixed_by_architecture.empty()) return config;
  const std::string architecture = config.get<std::string>("model.architecture");
  const auto fixed = flags.fixed_by_architecture.find(architecture);
  if (fixed == flags.fixed_by_architecture.end()) {
    std::string known;
    for (const auto& [name, assignment] : flags.fixed_by_architecture) known += (known.empty() ? "" : " or ") + name;
    throw Error("model.architecture: this command trains " + known + " models, the config says " + architecture);
  }
  config.apply_override(fixed->second);
  config.validate(recipes::run_schema());
  return config;
}

}  // namespace

void run_train(const TrainFlags& flags, const std::string& architecture) {
  const Config config = effective_config(flags);
  if (flags.print_config) {
    std::printf("%s", config.to_toml().c_str());
    return;
  }
  if (flags.out.empty() && flags.config.empty()) throw Error("--out: give the run directory");
  const fs::path run_dir = flags.out.empty() ? fs::path("runs") / fs::path(flags.config).stem() : fs::path(flags.out);
  recipes::RunRequest request{run_dir, flags.resume, flags.quiet, architecture, train::world_from_environment()};
  if (!request.world && flags.nproc * flags.nnodes > 1) {  // this process launches the workers
    train::LaunchOptions launch{flags.nproc, flags.nnodes, flags.node_rank, "127.0.0.1", 0, flags.ddp_timeout};
    if (!flags.master.empty()) train::parse_master(flags.master, launch);
    if (const int code = train::launch_workers(launch); code != 0) throw ExitCode(code);
    return;
  }
  const train::TrainResult result = recipes::run_training(config, request);
  if (result.stop_reason == "interrupted") throw ExitCode(130);
}

std::shared_ptr<TrainFlags> add_train_flags(CLI::App* sub) {
  auto flags = std::make_shared<TrainFlags>();
  sub->add_option("--config", flags->config, "TOML file with [model], [data], [train] and [decode] sections");
  sub->add_option("--recipe", flags->recipe,
                  "a named system (`strata recipes list`): its settings apply over --config, the overrides over both");
  sub->add_option("--base", flags->base,
                  "a trained run whose weights start this model (train.base_model), e.g. to train PALs on a frozen base");
  sub->add_option("--adapter", flags->adapter,
                  "an adapter that alone trains (adapter.name; keys adapter.*): lora or bottleneck wrap the model's "
                  "linear maps, prefix (seq2seq) or pal (encoders) are built into it. The run leaves "
                  "RUN/adapter.safetensors, which loads onto the --base model with --adapter FILE")
      ->check(CLI::IsMember(recipes::adapter_names()));
  sub->add_option("--out", flags->out, "run directory: checkpoints, metrics.jsonl, config.toml (default: runs/<config name>)");
  sub->add_option("--train-fraction", flags->train_fraction,
                  "train on this random share of the training set, 0 < F <= 1 (data.train_fraction; the subset is "
                  "fixed by data.fraction_seed, whatever train.seed)");
  sub->add_flag("--resume", flags->resume, "continue the run in --out from its latest checkpoint");
  sub->add_flag("--print-config", flags->print_config, "print the effective config (defaults filled in) and exit");
  sub->add_flag("--quiet", flags->quiet, "no progress bars");
  sub->add_option("--nproc", flags->nproc,
                  "data-parallel: start N worker processes on this machine (each reads its share of every batch; "
                  "the update is one process's on the same batch; threads per worker: the cores / N)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--nnodes", flags->nnodes, "data-parallel: machines in the run; run the same command on each")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--node-rank", flags->node_rank, "data-parallel: this machine's index, 0 .. nnodes-1 (0 hosts rank 0)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--master", flags->master,
                  "data-parallel: HOST[:PORT] of the machine with rank 0 (default 127.0.0.1 and a free port; "
                  "needed with --nnodes > 1). torchrun's MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK in "
                  "the environment make this process one worker instead");
  sub->add_option("--ddp-timeout", flags->ddp_timeout,
                  "data-parallel: seconds a worker waits for a silent peer before stopping with its rank's name")
      ->check(CLI::Range(1, 86400));
  sub->add_option("overrides", flags->overrides, "key=value settings that override the file, e.g. train.max_steps=500");
  return flags;
}

void register_train(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("train", "Train a model (seq2seq or extractive summariser, topic segmenter, causal LM) from a TOML config");
  std::string footer = "Architectures (model.architecture):";
  for (const recipes::Architecture* a : recipes::architectures()) footer += fmt::format("\n  {:<10} {}", a->name, a->summary);
  sub->footer(footer);
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] { run_train(*flags, ""); });
}

void register_lm_train(CLI::App& lm) {
  CLI::App* sub = lm.add_subcommand("train", "Train a causal language model (model.architecture = causal_lm)");
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] { run_train(*flags, "causal_lm"); });
}

}  // namespace strata::cli
