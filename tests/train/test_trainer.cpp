#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/train/checkpoint.h"
#include "strata/train/seq2seq_task.h"
#include "strata/train/trainer.h"
#include "support/word_tokenizer.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

models::ModelConfig tiny_trainer_config() {
  models::ModelConfig c;
  c.vocab_size = 30;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.max_positions = 32;
  c.dropout = 0.2;  // so that the dropout noise has to be reproduced too
  c.pad_id = 0;
  c.bos_id = 1;
  c.eos_id = 2;
  c.decoder_start_id = 1;
  return c;
}

// Random token sequences; the target is the source's first half (a learnable task).
std::vector<Seq2SeqExample> examples(int count, std::uint64_t seed) {
  torch::manual_seed(seed);
  std::vector<Seq2SeqExample> out;
  for (int i = 0; i < count; ++i) {
    const int length = 4 + i % 7;
    Seq2SeqExample e;
    const at::Tensor tokens = torch::randint(4, 30, {length}, torch::kInt32);
    e.source.token.assign(tokens.data_ptr<std::int32_t>(), tokens.data_ptr<std::int32_t>() + length);
    e.source.token.push_back(2);
    e.target.assign(e.source.token.begin(), e.source.token.begin() + length / 2);
    e.target.push_back(2);
    out.push_back(std::move(e));
  }
  return out;
}

// Delegates to a Seq2SeqTask and can interfere at a chosen call of loss(): raise SIGINT
// (Ctrl-C) or return a NaN loss.
class ScriptedTask : public TrainTask {
 public:
  ScriptedTask() : inner_(make_model(), tokenizer_, examples(40, 11), examples(8, 12), 8) {}
  torch::nn::Module& model() override { return inner_.model(); }
  const std::vector<std::size_t>& costs(Split split) const override { return inner_.costs(split); }
  BatchLoss loss(Split split, std::span<const std::size_t> rows, double label_smoothing) override {
    if (split == Split::Train && calls_ + 1 == poison_at) {
      torch::NoGradGuard no_grad;
      const auto first = model().named_parameters()[poisoned];
      first.view({-1})[0] = std::numeric_limits<float>::quiet_NaN();
    }
    BatchLoss out = inner_.loss(split, rows, label_smoothing);
    if (split != Split::Train) return out;
    widest = std::max(widest, rows.size());
    ++calls_;
    if (calls_ == interrupt_at) std::raise(SIGINT);
    if (calls_ == nan_at) out.loss_sum = out.loss_sum * std::numeric_limits<double>::quiet_NaN();
    return out;
  }
  int interrupt_at = -1;
  int nan_at = -1;
  int poison_at = -1;  // sets the first value of parameter `poisoned` to NaN before that call
  std::size_t widest = 0;  // the most rows a training batch had
  std::string poisoned;

 private:
  static models::Seq2Seq make_model() {
    torch::manual_seed(3);
    return models::Seq2Seq(tiny_trainer_config());
  }
  test_support::WordTokenizer tokenizer_;
  Seq2SeqTask inner_;
  int calls_ = 0;
};

TrainOptions options() {
  TrainOptions o;
  o.seed = 5;
  o.max_steps = 8;
  o.schedule.peak_lr = 3e-3;
  o.schedule.warmup_steps = 2;
  o.schedule.total_steps = 8;
  o.max_tokens = 48;
  o.accumulation = 2;
  o.log_every = 1;
  o.eval_every = 4;
  o.eval_docs = 0;
  o.keep_checkpoints = 0;
  o.threads = 2;
  return o;
}

RunInfo run_info(const fs::path& dir, bool resume = false) {
  RunInfo r;
  r.run_dir = dir;
  r.model_config = tiny_trainer_config().to_json();
  r.resume = resume;
  r.quiet = true;
  return r;
}

struct TempRun {
  fs::path dir = fs::temp_directory_path() / ("strata_trainer_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempRun() { fs::remove_all(dir); }
  ~TempRun() { fs::remove_all(dir); }
};

std::vector<nlohmann::json> metric_lines(const fs::path& run_dir) {
  JsonlReader reader(run_dir / "metrics.jsonl");
  std::vector<nlohmann::json> lines;
  nlohmann::json line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

TEST(Trainer, TrainingLowersTheLossAndWritesMetricsAndCheckpoints) {
  TempRun run;
  ScriptedTask task;
  TrainOptions o = options();
  o.max_steps = 40;
  o.schedule.total_steps = 40;
  o.eval_every = 20;
  const TrainResult result = run_training(task, o, run_info(run.dir));
  EXPECT_EQ(result.steps, 40);
  EXPECT_EQ(result.stop_reason, "max_steps");
  const auto lines = metric_lines(run.dir);
  ASSERT_EQ(lines.size(), 42u);  // 40 training lines, 2 validation lines
  EXPECT_LT(lines.back()["loss"].get<double>(), lines[20]["loss"].get<double>());  // valid: step 40 < step 20
  EXPECT_LT(lines[40]["loss"].get<double>(), lines[0]["loss"].get<double>());
  EXPECT_TRUE(fs::exists(checkpoint_dir(run.dir, 20)));
  EXPECT_EQ(*find_latest_checkpoint(run.dir), checkpoint_dir(run.dir, 40));
  EXPECT_EQ(*find_best_checkpoint(run.dir), checkpoint_dir(run.dir, 40));
}

TEST(Trainer, MaxRowsCapsTheExamplesOfABatch) {
  TempRun run;
  ScriptedTask wide, capped;
  TrainOptions o = options();
  run_training(wide, o, run_info(run.dir));
  EXPECT_GT(wide.widest, 3u);  // 48 tokens hold 4-8 of the short examples
  fs::remove_all(run.dir);
  o.max_rows = 3;
  run_training(capped, o, run_info(run.dir));
  EXPECT_EQ(capped.widest, 3u);
}

TEST(Trainer, SameSeedSameLossCurve) {
  TempRun a, b;
  ScriptedTask first, second;
  run_training(first, options(), run_info(a.dir));
  run_training(second, options(), run_info(b.dir));
  const auto la = metric_lines(a.dir), lb = metric_lines(b.dir);
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) EXPECT_EQ(la[i]["loss"], lb[i]["loss"]) << "line " << i;
}

TEST(Trainer, CtrlCSavesAndResumeContinuesBitForBit) {
  TempRun straight, interrupted;
  ScriptedTask uninterrupted_task;
  run_training(uninterrupted_task, options(), run_info(straight.dir));

  ScriptedTask task;
  task.interrupt_at = 9;  // during step 5 (two batches per step): it finishes, then stops
  const TrainResult stopped = run_training(task, options(), run_info(interrupted.dir));
  EXPECT_EQ(stopped.stop_reason, "interrupted");
  EXPECT_EQ(stopped.steps, 5);
  EXPECT_EQ(*find_latest_checkpoint(interrupted.dir), checkpoint_dir(interrupted.dir, 5));

  ScriptedTask resumed_task;  // a fresh process would start from other weights
  const TrainResult resumed = run_training(resumed_task, options(), run_info(interrupted.dir, /*resume=*/true));
  EXPECT_EQ(resumed.steps, 8);
  const Checkpoint a = load_checkpoint(checkpoint_dir(straight.dir, 8));
  const Checkpoint b = load_checkpoint(checkpoint_dir(interrupted.dir, 8));
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (const auto& [name, tensor] : a.weights) EXPECT_TRUE(tensor.equal(b.weights.at(name))) << name;
  for (const auto& [name, tensor] : a.optimizer_state) EXPECT_TRUE(tensor.equal(b.optimizer_state.at(name))) << name;
  // The metrics of both runs agree line for line (the resumed run dropped nothing, repeated nothing).
  const auto la = metric_lines(straight.dir), lb = metric_lines(interrupted.dir);
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) EXPECT_EQ(la[i]["loss"], lb[i]["loss"]) << "line " << i;
}

TEST(Trainer, NanLossStopsNamingTheStepAndKeepsTheLastGoodCheckpoint) {
  TempRun run;
  ScriptedTask task;
  task.nan_at = 11;  // step 6
  try {
    run_training(task, options(), run_info(run.dir));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step 6"), std::string::npos) << message;
    EXPECT_NE(message.find("step-00000004"), std::string::npos) << message;
  }
  EXPECT_EQ(*find_latest_checkpoint(run.dir), checkpoint_dir(run.dir, 4));
  EXPECT_NO_THROW(load_checkpoint(checkpoint_dir(run.dir, 4)));
}

TEST(Trainer, ANonFiniteParameterIsNamedWithTheBatchThatMetIt) {
  TempRun run;
  ScriptedTask task;
  task.poison_at = 11;  // step 6, its first micro-batch
  task.poisoned = "decoder.layers.0.fc1.weight";
  try {
    run_training(task, options(), run_info(run.dir));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step 6: the training loss is NaN on micro-batch 1 of 2 (training examples "),
              std::string::npos) << message;
    EXPECT_NE(message.find("the first non-finite parameter is decoder.layers.0.fc1.weight's (1 NaN and 0 infinite"),
              std::string::npos) << message;
    EXPECT_NE(message.find("train.nonfinite = \"skip\""), std::string::npos) << message;
  }
  EXPECT_EQ(*find_latest_checkpoint(run.dir), checkpoint_dir(run.dir, 4));
}

TEST(Trainer, NanLossSkipsItsStepWhenAskedAndCountsIt) {
  TempRun run;
  ScriptedTask task;
  task.nan_at = 11;  // step 6
  TrainOptions o = options();
  o.skip_nonfinite = true;
  testing::internal::CaptureStderr();
  const TrainResult result = run_training(task, o, run_info(run.dir));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.steps, 8);
  EXPECT_NE(warnings.find("step 6 skipped (train.nonfinite = \"skip\"): the training loss is NaN"), std::string::npos)
      << warnings;
  const auto lines = metric_lines(run.dir);
  for (const nlohmann::json& line : lines) {
    if (line["split"] != "train") continue;
    EXPECT_EQ(line.contains("skipped_steps"), line["step"].get<int>() >= 6) << line.dump();
  }
  // No NaN reached the weights: the skipped step made no update.
  for (const auto& [name, tensor] : load_checkpoint(checkpoint_dir(run.dir, 8)).weights)
    EXPECT_TRUE(torch::isfinite(tensor).all().item<bool>()) << name;
}

TEST(Trainer, ResumeRefusesAnotherModelConfiguration) {
  TempRun run;
  ScriptedTask task;
  TrainOptions o = options();
  o.max_steps = 4;
  o.schedule.total_steps = 4;
  run_training(task, o, run_info(run.dir));
  RunInfo other = run_info(run.dir, true);
  other.model_config["d_ff"] = 64;
  ScriptedTask again;
  EXPECT_THROW(run_training(again, o, other), Error);
}

}  // namespace
}  // namespace strata::train
