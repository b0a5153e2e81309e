#include "strata/train/trainer.h"

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/data/token_batches.h"
#include "strata/train/adamw.h"
#include "strata/train/checkpoint.h"
#include "strata/train/gradient_reducer.h"
#include "strata/train/lr_schedule.h"
#include "strata/train/process_group.h"

namespace strata::train {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};
// A second Ctrl-C does not wait for the checkpoint: it ends the process as usual.
extern "C" void on_interrupt(int) {
  if (g_interrupted) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
  g_interrupted = true;
}

// Ctrl-C sets a flag that the loop reads between steps, for as long as training runs.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction action = {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_);
  }
  ~InterruptGuard() { sigaction(SIGINT, &previous_, nullptr); }

 private:
  struct sigaction previous_ = {};
};

// Dropout's seed for the update after `step` updates: a function of (seed, step) only.
std::uint64_t step_seed(std::uint64_t seed, std::int64_t step) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(step + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) >> 1;  // torch::manual_seed takes it as uint64; keep it positive as int64 too
}

// metrics.jsonl, appended line by line (flushed, so a crash loses nothing written).
class MetricsLog {
 public:
  explicit MetricsLog(fs::path path) : path_(std::move(path)) {}

  // On resume: drop what the interrupted run logged after the checkpoint it resumes from.
  void keep_through(std::int64_t step) {
    if (!fs::exists(path_)) return;
    std::string kept;
    JsonlReader reader(path_);
    nlohmann::json line;
    while (reader.next(line))
      if (line.value("step", std::int64_t{0}) <= step) kept += line.dump() + "\n";
    write_file_atomic(path_, kept);
  }

  void append(const nlohmann::json& line) {
    std::ofstream out(path_, std::ios::app);
    out << line.dump() << '\n';
    if (!out) throw Error("cannot write " + path_.string());
  }

 private:
  fs::path path_;
};

bool higher_is_better(const std::string& metric) { return metric != "valid_loss"; }

class Loop {
 public:
  Loop(TrainTask& task, const TrainOptions& options, const RunInfo& run)
      : task_(task),
        options_(options),
        run_(run),
        adamw_(named_parameters(task.model()), AdamWOptions{options.beta1, options.beta2, options.eps, options.weight_decay}),
        metrics_(run.run_dir / "metrics.jsonl") {
    if (run.group) reducer_ = std::make_unique<GradientReducer>(*run.group, adamw_.parameters());
  }

  TrainResult run() {
    if (lead()) {
      fs::create_directories(run_.run_dir);
      for (const std::string& line : recover_interrupted_saves(run_.run_dir))
        std::fprintf(stderr, "strata: checkpoints: %s\n", line.c_str());
    }
    if (run_.resume && lead()) resume();
    if (run_.group) follow_rank0();
    task_.start_epoch(state_.epoch);
    const auto& costs = task_.costs(Split::Train);
    if (costs.empty()) throw Error("training: the training set is empty");
    if (options_.metric != "valid_loss" && (task_.costs(Split::Valid).empty() || options_.eval_docs <= 0))
      throw Error("train.metric: '" + options_.metric + "' needs a validation set and train.eval_docs > 0");
    if (!task_.draws_batches()) plan_ = plan_batches(costs, plan_options(), static_cast<std::uint64_t>(state_.epoch));

    InterruptGuard interrupt_guard;
    Progress progress("train", static_cast<std::size_t>(options_.max_steps - state_.step), "steps",
                      run_.quiet || !lead());
    const auto start = Clock::now();
    window_start_ = start;
    TrainResult result;
    while (result.stop_reason.empty()) {
      if (state_.step >= options_.max_steps) {
        result.stop_reason = "max_steps";
      } else if (const std::string reason = stop_signal(start); !reason.empty()) {
        result.stop_reason = reason;
      } else if (!update()) {
        result.stop_reason = "max_epochs";
      } else {
        progress.add(1);
        progress.set_status(status_);
        warn_past_expected_minutes(start);
        if (state_.step % options_.eval_every == 0 && evaluate_and_save_agreed()) result.stop_reason = "patience";
      }
    }
    progress.finish();
    if (!lead()) {
      // Rank 0 alone evaluates and saves.
    } else if (result.stop_reason == "interrupted") {
      save();  // at once: the user is waiting
    } else if (saved_step_ != state_.step) {
      evaluate_and_save();
    }
    result.steps = state_.step;
    result.best_metric = state_.best_metric;
    result.best_step = state_.best_step;
    result.last_checkpoint = checkpoint_dir(run_.run_dir, state_.step);
    return result;
  }

 private:
  static NamedTensors named_parameters(torch::nn::Module& model) {
    NamedTensors out;
    for (const auto& p : model.named_parameters()) out.emplace_back(p.key(), p.value());
    return out;
  }

  BatchPlanOptions plan_options() const {
    BatchPlanOptions o;
    o.max_tokens = options_.max_tokens;
    o.max_rows = options_.max_rows;
    o.seed = options_.seed;
    return o;
  }

  bool lead() const { return !run_.group || run_.group->rank() == 0; }

  // Once, when train.expected_minutes has passed with steps left: the run goes on (its result
  // does not depend on the clock), and says so rather than stopping early.
  void warn_past_expected_minutes(Clock::time_point start) {
    if (warned_expected_ || options_.expected_minutes <= 0 || !lead() || state_.step >= options_.max_steps) return;
    const double minutes = std::chrono::duration<double>(Clock::now() - start).count() / 60;
    if (minutes <= options_.expected_minutes) return;
    warned_expected_ = true;
    std::fprintf(stderr,
                 "\nstrata: warning: %.1f minutes passed, past the expected %.1f (train.expected_minutes), at step "
                 "%lld of %lld: this machine is slower or busier than expected; training goes on to the last step\n",
                 minutes, options_.expected_minutes, static_cast<long long>(state_.step),
                 static_cast<long long>(options_.max_steps));
  }

  // "interrupted" (Ctrl-C), "max_minutes" or "": in a data-parallel run, every rank stops at
  // the same step, when any was interrupted or rank 0's clock says the time is up.
  std::string stop_signal(Clock::time_point start) {
    bool interrupted = g_interrupted;
    bool time_up = options_.max_minutes > 0 &&
                   std::chrono::duration<double>(Clock::now() - start).count() > options_.max_minutes * 60;
    if (run_.group) {
      at::Tensor flags = torch::tensor({interrupted ? 1.0 : 0.0, time_up && lead() ? 1.0 : 0.0}, torch::kDouble);
      const auto waited = Clock::now();
      run_.group->all_reduce_sum(flags, fmt::format("agreeing to go on before step {}", state_.step + 1));
      window_comm_s_ += std::chrono::duration<double>(Clock::now() - waited).count();
      interrupted = flags[0].item<double>() > 0;
      time_up = flags[1].item<double>() > 0;
    }
    return interrupted ? "interrupted" : time_up ? "max_minutes" : "";
  }

  // A data-parallel rank takes rank 0's weights, and when resuming, its trainer state, sampler
  // and optimizer state (rank 0 read the checkpoint; another machine may have none).
  void follow_rank0() {
    ProcessGroup& group = *run_.group;
    if (run_.resume) {
      const nlohmann::json shared = group.share_from_rank0(
          "resume", {{"state", trainer_state_json(state_)}, {"optimizer_step", adamw_.step_count()}});
      if (!lead()) {
        state_ = trainer_state_from_json(shared.at("state"), "rank 0's trainer state");
        adamw_.set_step_count(shared.at("optimizer_step").get<std::int64_t>());
        if (task_.draws_batches()) task_.restore_sampler_state(state_.extra.at("sampler"));
      }
      std::vector<at::Tensor> optimizer;
      for (auto& [name, tensor] : adamw_.state_tensors()) optimizer.push_back(tensor);
      group.broadcast_from_rank0(optimizer, "sharing rank 0's optimizer state");
    }
    std::vector<at::Tensor> weights;
    for (auto& [name, tensor] : module_tensors(task_.model())) weights.push_back(tensor);
    group.broadcast_from_rank0(weights, "sharing rank 0's weights");
  }

  void resume() {
    const auto latest = find_latest_checkpoint(run_.run_dir);
    if (!latest) throw Error("--resume: " + run_.run_dir.string() + " has no checkpoint to resume from");
    const Checkpoint c = load_checkpoint(*latest);
    if (c.model_config != run_.model_config)
      throw Error("--resume: " + latest->string() + " holds a model of another configuration than this run's");
    load_weights_into(task_.model(), c.weights, (*latest / "model.safetensors").string());
    adamw_.load_state(c.optimizer_state, c.optimizer_step, (*latest / "optimizer.safetensors").string());
    if (c.trainer_state.seed != options_.seed)
      throw Error("--resume: the checkpoint was trained with train.seed " + std::to_string(c.trainer_state.seed) +
                  ", this run says " + std::to_string(options_.seed));
    state_ = c.trainer_state;
    if (task_.draws_batches()) {
      if (!state_.extra.contains("sampler"))
        throw Error("--resume: " + latest->string() + " holds no sampler state, which this task needs to go on");
      task_.restore_sampler_state(state_.extra.at("sampler"));
    }
    saved_step_ = state_.step;
    metrics_.keep_through(state_.step);
  }

  // The next training batch, moving to the next epoch when one ends; nullptr past max_epochs.
  const std::vector<std::size_t>* next_batch() {
    const bool drawn = task_.draws_batches();
    if (static_cast<std::size_t>(state_.batch_in_epoch) == (drawn ? task_.batches_per_epoch() : plan_.size())) {
      if (options_.max_epochs > 0 && state_.epoch + 1 >= options_.max_epochs) return nullptr;
      ++state_.epoch;
      state_.batch_in_epoch = 0;
      task_.start_epoch(state_.epoch);
      if (!drawn)
        plan_ = plan_batches(task_.costs(Split::Train), plan_options(), static_cast<std::uint64_t>(state_.epoch));
    }
    if (!drawn) return &plan_[static_cast<std::size_t>(state_.batch_in_epoch++)];
    ++state_.batch_in_epoch;
    drawn_ = task_.next_batch();
    return &drawn_;
  }

  std::string last_good() const {
    const auto latest = find_latest_checkpoint(run_.run_dir);
    return latest ? "the last good checkpoint is " + latest->string() : "no checkpoint was saved yet";
  }

  // One optimizer update over `accumulation` batches; false when the epochs ran out.
  bool update() {
    torch::nn::Module& model = task_.model();
    model.train();
    torch::manual_seed(step_seed(options_.seed, state_.step));
    adamw_.zero_grad();
    double loss = 0;
    std::int64_t tokens = 0;
    std::string nonfinite;  // why this step's update cannot be made
    for (std::int64_t micro = 0; micro < options_.accumulation; ++micro) {
      const std::vector<std::size_t>* rows = next_batch();
      if (!rows) return false;
      if (reducer_ && micro + 1 == options_.accumulation) reducer_->arm(state_.step + 1);
      const auto [value, batch_tokens] = forward_backward(*rows);
      if (!std::isfinite(value) && nonfinite.empty())
        nonfinite = fmt::format("the training loss is {} on micro-batch {} of {} (training examples {}); {}",
                                nonfinite_name(value), micro + 1, options_.accumulation, row_list(*rows),
                                describe_nonfinite(false));
      loss += value;
      tokens += batch_tokens;
    }
    if (reducer_) window_comm_s_ += reducer_->finish();
    const double norm = clip_grad_norm(adamw_.parameters(), options_.clip_norm > 0 ? options_.clip_norm : INFINITY);
    if (!std::isfinite(norm) && nonfinite.empty())
      nonfinite = fmt::format("the gradient norm is {}; {}", nonfinite_name(norm), describe_nonfinite(true));
    const double lr = learning_rate(options_.schedule, state_.step);
    if (nonfinite.empty()) {
      adamw_.step(lr);
    } else if (!options_.skip_nonfinite) {
      throw Error(fmt::format("step {}: {}; stopping ({}; train.nonfinite = \"skip\" skips such steps)",
                              state_.step + 1, nonfinite, last_good()));
    } else {
      state_.extra["skipped_steps"] = state_.extra.value("skipped_steps", 0) + 1;
      if (lead())
        std::fprintf(stderr, "strata: warning: step %lld skipped (train.nonfinite = \"skip\"): %s\n",
                     static_cast<long long>(state_.step + 1), nonfinite.c_str());
    }
    ++state_.step;

    if (nonfinite.empty()) {  // the window's mean loss is over the steps that updated
      window_loss_ += loss;
      ++window_updates_;
    }
    window_tokens_ += tokens;
    ++window_steps_;
    if (state_.step % options_.log_every == 0) {
      const double seconds = std::chrono::duration<double>(Clock::now() - window_start_).count();
      const double mean_loss = window_updates_ > 0 ? window_loss_ / static_cast<double>(window_updates_) : NAN;
      const double tokens_per_s = seconds > 0 ? window_tokens_ / seconds : 0;
      nlohmann::json line = {{"split", "train"}, {"step", state_.step}, {"epoch", state_.epoch}, {"loss", mean_loss},
                             {"lr", lr}, {"grad_norm", norm}, {"tokens_per_s", tokens_per_s}};
      if (state_.extra.contains("skipped_steps")) line["skipped_steps"] = state_.extra["skipped_steps"];
      if (run_.group) {
        line["world_size"] = run_.group->size();
        line["comm_wait_share"] = seconds > 0 ? window_comm_s_ / seconds : 0;  // rank 0's time blocked on peers
        line["step_ms"] = 1000 * seconds / static_cast<double>(window_steps_);
        line["allreduce_bytes_per_step"] = reducer_->bytes_per_step();
      }
      if (lead()) metrics_.append(line);
      status_ = fmt::format("loss {:.3f} | {:.0f} tok/s", mean_loss, tokens_per_s);
      window_loss_ = window_comm_s_ = 0;
      window_tokens_ = window_steps_ = window_updates_ = 0;
      window_start_ = Clock::now();
    }
    return true;
  }

  // The forward and backward pass of one micro-batch: alone, or this rank's shard of it with
  // the loss normalised by the whole batch's labels. The batch's loss (as a share of the
  // step's) and its tokens, over all ranks.
  std::pair<double, std::int64_t> forward_backward(const std::vector<std::size_t>& rows) {
    const double accumulation = static_cast<double>(options_.accumulation);
    if (!run_.group) {
      const BatchLoss batch = task_.loss(Split::Train, rows, options_.label_smoothing);
      const at::Tensor scaled = batch.loss_sum / (static_cast<double>(std::max<std::int64_t>(batch.labels, 1)) * accumulation);
      const double value = scaled.item<double>();
      if (std::isfinite(value)) scaled.backward();
      return {value, batch.tokens};
    }
    ProcessGroup& group = *run_.group;
    const std::vector<std::size_t> shard = shard_of(rows, group.rank(), group.size());
    BatchLoss batch;
    if (!shard.empty()) batch = task_.shard_loss(rows, shard, options_.label_smoothing);
    group.fault_point(state_.step + 1);
    at::Tensor totals = torch::tensor({batch.loss_sum.defined() ? batch.loss_sum.item<double>() : 0.0,
                                       static_cast<double>(batch.labels), static_cast<double>(batch.tokens),
                                       batch.whole_batch_mean ? 1.0 : 0.0},
                                      torch::kDouble);
    const auto waited = Clock::now();
    group.all_reduce_sum(totals, fmt::format("the loss all-reduce of step {}", state_.step + 1));
    window_comm_s_ += std::chrono::duration<double>(Clock::now() - waited).count();
    const bool whole_batch_mean = totals[3].item<double>() > 0;
    const double denominator = (whole_batch_mean ? 1.0 : std::max(totals[1].item<double>(), 1.0)) * accumulation;
    const double value = totals[0].item<double>() / denominator;
    if (batch.loss_sum.defined() && std::isfinite(value)) (batch.loss_sum / denominator).backward();
    return {value, static_cast<std::int64_t>(totals[2].item<double>())};
  }

  static std::string nonfinite_name(double value) { return std::isnan(value) ? "NaN" : value > 0 ? "inf" : "-inf"; }

  // "3, 17, 22" (the first 8, then how many more).
  static std::string row_list(const std::vector<std::size_t>& rows) {
    std::string text;
    for (std::size_t i = 0; i < rows.size() && i < 8; ++i) text += (i ? ", " : "") + std::to_string(rows[i]);
    if (rows.size() > 8) text += fmt::format(" and {} more", rows.size() - 8);
    return text;
  }

  // The first parameter (or, with `gradients`, the first gradient) that holds a NaN or an
  // infinity, and how many: where a non-finite value went first.
  std::string describe_nonfinite(bool gradients) {
    torch::NoGradGuard no_grad;
    for (const auto& item : task_.model().named_parameters()) {
      const at::Tensor values = gradients ? item.value().grad() : item.value();
      if (!values.defined()) continue;
      const std::int64_t bad = (~torch::isfinite(values)).sum().item<std::int64_t>();
      if (bad == 0) continue;
      const std::int64_t nan = torch::isnan(values).sum().item<std::int64_t>();
      return fmt::format("the first non-finite {} is {}'s ({} NaN and {} infinite of {} values)",
                         gradients ? "gradient" : "parameter", item.key(), nan, bad - nan, values.numel());
    }
    return gradients ? "no gradient holds a non-finite value (their norm overflowed)"
                     : "every parameter is finite: the batch or the forward pass made it";
  }

  double validation_loss() {
    BatchPlanOptions o = plan_options();
    o.shuffle = false;
    double total = 0;
    std::int64_t labels = 0;
    for (const auto& rows : plan_batches(task_.costs(Split::Valid), o, 0)) {
      const BatchLoss batch = task_.loss(Split::Valid, rows, 0.0);
      total += batch.loss_sum.item<double>();
      labels += batch.labels;
    }
    return total / static_cast<double>(std::max<std::int64_t>(labels, 1));
  }

  // evaluate_and_save() on rank 0, its verdict shared with every rank.
  bool evaluate_and_save_agreed() {
    const bool stop = lead() && evaluate_and_save();
    if (!run_.group) return stop;
    return run_.group->share_from_rank0(fmt::format("patience/{}", state_.step), stop).get<bool>();
  }

  // Evaluates (when there is a validation set), saves a checkpoint, and says whether
  // patience ran out.
  bool evaluate_and_save() {
    bool improved = false;
    if (!task_.costs(Split::Valid).empty()) {
      torch::nn::Module& model = task_.model();
      model.eval();
      std::map<std::string, double> values;
      {
        torch::NoGradGuard no_grad;
        values = task_.extra_metrics(options_.eval_docs);
        values["loss"] = validation_loss();
      }
      nlohmann::json line = {{"split", "valid"}, {"step", state_.step}};
      for (const auto& [name, value] : values) line[name] = value;
      metrics_.append(line);
      const auto found = values.find(options_.metric == "valid_loss" ? "loss" : options_.metric);
      if (found == values.end()) {
        std::string known;
        for (const auto& [name, v] : values) known += (known.empty() ? "" : ", ") + name;
        throw Error("train.metric: this task's evaluations report no '" + options_.metric + "' (they report: " +
                    known + ")");
      }
      const double value = found->second;
      improved = !state_.best_metric ||
                 (higher_is_better(options_.metric) ? value > *state_.best_metric : value < *state_.best_metric);
      if (improved) {
        state_.best_metric = value;
        state_.best_step = state_.step;
        state_.extra["evals_without_improvement"] = 0;
      } else {
        state_.extra["evals_without_improvement"] = state_.extra.value("evals_without_improvement", 0) + 1;
      }
    }
    save();
    if (improved) mark_best_checkpoint(run_.run_dir, state_.step);
    prune_checkpoints(run_.run_dir, options_.keep_checkpoints);
    return options_.patience > 0 && state_.extra.value("evals_without_improvement", 0) >= options_.patience;
  }

  void save() {
    CheckpointContents contents;
    contents.weights = module_tensors(task_.model());
    contents.optimizer_state = adamw_.state_tensors();
    contents.optimizer_step = adamw_.step_count();
    contents.model_config = run_.model_config;
    contents.run_config = run_.run_config;
    contents.trainer_state = state_;
    contents.trainer_state.seed = options_.seed;
    if (task_.draws_batches()) contents.trainer_state.extra["sampler"] = task_.sampler_state();
    contents.tokenizer_dir = run_.tokenizer_dir;
    save_checkpoint(checkpoint_dir(run_.run_dir, state_.step), contents);
    mark_latest_checkpoint(run_.run_dir, state_.step);
    saved_step_ = state_.step;
  }

  TrainTask& task_;
  const TrainOptions& options_;
  const RunInfo& run_;
  AdamW adamw_;
  MetricsLog metrics_;
  TrainerState state_;
  BatchPlan plan_;
  std::vector<std::size_t> drawn_;  // the batch a task drew (draws_batches)
  std::unique_ptr<GradientReducer> reducer_;  // data-parallel runs only
  std::int64_t saved_step_ = -1;
  double window_loss_ = 0, window_comm_s_ = 0;
  bool warned_expected_ = false;
  std::int64_t window_tokens_ = 0, window_steps_ = 0, window_updates_ = 0;
  Clock::time_point window_start_;
  std::string status_;
};

}  // namespace

TrainResult run_training(TrainTask& task, const TrainOptions& options, const RunInfo& run) {
  // The processes of a data-parallel run on one machine share its cores.
  const int sharing = run.group ? run.group->world().local_world_size : 1;
  torch::set_num_threads(options.threads > 0
                             ? static_cast<int>(options.threads)
                             : std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / sharing));
  return Loop(task, options, run).run();
}

}  // namespace strata::train
