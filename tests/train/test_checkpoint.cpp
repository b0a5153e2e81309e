#include <gtest/gtest.h>
#include <torch/torch.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/train/adamw.h"
#include "strata/train/checkpoint.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

struct TinyNet : torch::nn::Module {
  explicit TinyNet(int64_t hidden)
      : fc1(register_module("fc1", torch::nn::Linear(4, hidden))),
        norm(register_module("layer_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, 3))) {
    counts = register_buffer("counts", torch::arange(3, torch::kInt64));
  }
  torch::nn::Linear fc1;
  torch::nn::LayerNorm norm;
  torch::nn::Linear fc2;
  at::Tensor counts;
};

class CheckpointTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "strata_train_";
    name.append(std::to_string(::getpid())).append("_").append(info->name());
    root_ = fs::temp_directory_path() / name;
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A net with a few AdamW steps behind it, saved as `dir`.
  CheckpointContents contents(TinyNet& net, AdamW& optimizer, int64_t step) {
    for (int i = 0; i < 2; ++i) {
      for (const at::Tensor& p : net.parameters()) p.mutable_grad() = torch::randn(p.sizes());
      optimizer.step(1e-2);
    }
    CheckpointContents c;
    c.weights = module_tensors(net);
    c.optimizer_state = optimizer.state_tensors();
    c.optimizer_step = optimizer.step_count();
    c.model_config = {{"d_model", net.fc1->options.out_features()}};
    c.run_config = {{"train", {{"lr", 1e-2}}}, {"seed", 42}};
    c.trainer_state.step = step;
    c.trainer_state.epoch = 1;
    c.trainer_state.batch_in_epoch = 5;
    c.trainer_state.best_metric = 0.25;
    c.trainer_state.best_step = step;
    c.trainer_state.seed = 42;
    c.trainer_state.extra = {{"metric", "rougeL"}};
    return c;
  }

  std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path root_;
};

std::string checkpoint_error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(CheckpointTest, RoundTripIsExact) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  CheckpointContents saved = contents(net, optimizer, 7);
  const fs::path tokenizer = root_ / "tok";
  fs::create_directories(tokenizer / "sub");
  write_file_atomic(tokenizer / "tokenizer.json", "{\"model\": 1}");
  write_file_atomic(tokenizer / "sub" / "extra.txt", "x");
  saved.tokenizer_dir = tokenizer;
  const fs::path dir = root_ / "ckpt";
  save_checkpoint(dir, saved);
  EXPECT_EQ(entries(root_), (std::vector<std::string>{"ckpt", "tok"}));

  const Checkpoint loaded = load_checkpoint(dir);
  torch::manual_seed(2);
  TinyNet restored(8);
  load_weights_into(restored, loaded.weights, "model.safetensors");
  const auto original = net.named_parameters();
  for (const auto& item : restored.named_parameters())
    EXPECT_TRUE(torch::equal(item.value(), original[item.key()])) << item.key();
  EXPECT_TRUE(torch::equal(restored.counts, net.counts));

  AdamW resumed(module_tensors(restored));
  resumed.load_state(loaded.optimizer_state, loaded.optimizer_step);
  EXPECT_EQ(resumed.step_count(), 2);
  const NamedTensors before = optimizer.state_tensors(), after = resumed.state_tensors();
  ASSERT_EQ(before.size(), after.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i].first, after[i].first);
    EXPECT_TRUE(torch::equal(before[i].second, after[i].second)) << before[i].first;
  }

  EXPECT_EQ(loaded.model_config, saved.model_config);
  EXPECT_EQ(loaded.run_config, saved.run_config);
  const TrainerState& state = loaded.trainer_state;
  EXPECT_EQ(state.step, 7);
  EXPECT_EQ(state.epoch, 1);
  EXPECT_EQ(state.batch_in_epoch, 5);
  EXPECT_EQ(state.best_metric, 0.25);
  EXPECT_EQ(state.best_step, 7);
  EXPECT_EQ(state.seed, 42u);
  EXPECT_EQ(state.extra, saved.trainer_state.extra);
  ASSERT_TRUE(loaded.tokenizer_dir);
  EXPECT_EQ(read_file(*loaded.tokenizer_dir / "sub" / "extra.txt"), "x");
}

TEST_F(CheckpointTest, SavingOverAnExistingCheckpointReplacesIt) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  const fs::path dir = root_ / "ckpt";
  save_checkpoint(dir, contents(net, optimizer, 1));
  CheckpointContents second = contents(net, optimizer, 2);
  second.trainer_state.best_metric.reset();
  second.trainer_state.best_step.reset();
  save_checkpoint(dir, second);
  EXPECT_EQ(entries(root_), std::vector<std::string>{"ckpt"});
  const Checkpoint loaded = load_checkpoint(dir);
  EXPECT_EQ(loaded.trainer_state.step, 2);
  EXPECT_FALSE(loaded.trainer_state.best_metric);
  EXPECT_FALSE(loaded.trainer_state.best_step);
  EXPECT_EQ(loaded.optimizer_step, 4);
  EXPECT_FALSE(loaded.tokenizer_dir);
}

// The pid of a process that has ended: a save it left half done is nobody's now.
int ended_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return static_cast<int>(pid);
}

TEST_F(CheckpointTest, InterruptedSavesAreUndoneOnceTheirProcessHasEnded) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  const fs::path run = root_ / "run";
  // A process replacing step 3 was killed between moving the old one aside and installing the
  // new one, and another left a half-written step 4.
  save_checkpoint(checkpoint_dir(run, 3), contents(net, optimizer, 3));
  mark_latest_checkpoint(run, 3);
  const std::string dead = std::to_string(ended_pid());
  fs::rename(checkpoint_dir(run, 3), run / "checkpoints" / ("step-00000003.old-" + dead));
  fs::create_directories(run / "checkpoints" / ("step-00000004.tmp-" + dead));
  // A save still running in this process is left alone.
  const std::string mine = "step-00000005.tmp-" + std::to_string(::getpid());
  fs::create_directories(run / "checkpoints" / mine);
  EXPECT_THROW(find_latest_checkpoint(run), Error);

  const std::vector<std::string> done = recover_interrupted_saves(run);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(entries(run / "checkpoints"), (std::vector<std::string>{"latest", "step-00000003", mine}));
  EXPECT_EQ(load_checkpoint(*find_latest_checkpoint(run)).trainer_state.step, 3);
  EXPECT_TRUE(recover_interrupted_saves(run).empty());
}

TEST_F(CheckpointTest, WeightsOfAnotherArchitectureAreAClearError) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  save_checkpoint(root_ / "ckpt", contents(net, optimizer, 1));
  const Checkpoint loaded = load_checkpoint(root_ / "ckpt");

  TinyNet wider(16);
  const std::string message =
      checkpoint_error_of([&] { load_weights_into(wider, loaded.weights, "ckpt/model.safetensors"); });
  EXPECT_EQ(message, "ckpt/model.safetensors: tensor 'fc1.weight' has shape [8, 4], expected [16, 4]");

  TinyNet extended(8);
  extended.register_parameter("prefix_keys", torch::zeros({2, 8}));
  const std::string names = checkpoint_error_of([&] { load_weights_into(extended, loaded.weights, "m"); });
  EXPECT_EQ(names, "m: tensors do not match the model; 1 missing: prefix_keys");
  auto more = loaded.weights;
  more.emplace("pooler.weight", torch::zeros({1}));
  EXPECT_EQ(checkpoint_error_of([&] { load_weights_into(net, more, "m"); }),
            "m: tensors do not match the model; 1 unexpected: pooler.weight");
}

TEST_F(CheckpointTest, MissingOrMalformedFilesAreNamed) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  const fs::path dir = root_ / "ckpt";
  save_checkpoint(dir, contents(net, optimizer, 1));
  fs::remove(dir / "optimizer.safetensors");
  EXPECT_EQ(checkpoint_error_of([&] { load_checkpoint(dir); }),
            (dir / "optimizer.safetensors").string() + ": missing from the checkpoint");

  save_checkpoint(dir, contents(net, optimizer, 1));
  write_file_atomic(dir / "trainer_state.json", R"({"step": 1, "epoch": 0, "batch_in_epoch": 0,
                    "best_metric": null, "best_step": null})");
  const std::string message = checkpoint_error_of([&] { load_checkpoint(dir); });
  EXPECT_NE(message.find("trainer_state.json"), std::string::npos) << message;
  EXPECT_NE(message.find("seed"), std::string::npos) << message;

  EXPECT_NE(checkpoint_error_of([&] { load_checkpoint(root_ / "nothing"); }).find("nothing"), std::string::npos);
}

TEST_F(CheckpointTest, FailedSaveRemovesItsTemporary) {
  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  CheckpointContents c = contents(net, optimizer, 1);
  c.tokenizer_dir = root_ / "no-such-tokenizer";
  const std::string message = checkpoint_error_of([&] { save_checkpoint(root_ / "ckpt", c); });
  EXPECT_NE(message.find("no-such-tokenizer"), std::string::npos) << message;
  EXPECT_TRUE(entries(root_).empty());
}

// A real write failure: the child may write files of at most 4 KiB (RLIMIT_FSIZE), so its
// optimizer.safetensors fails with EFBIG after model.safetensors was written.
TEST_F(CheckpointTest, FullDiskLeavesThePreviousCheckpointIntact) {
  torch::manual_seed(1);
  TinyNet small(8);
  AdamW small_optimizer(module_tensors(small));
  const fs::path dir = root_ / "ckpt";
  save_checkpoint(dir, contents(small, small_optimizer, 1));

  TinyNet big(64);  // model.safetensors about 3.2 KB, optimizer.safetensors about 5.8 KB
  AdamW big_optimizer(module_tensors(big));
  const CheckpointContents second = contents(big, big_optimizer, 2);

  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(pipe_fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 1;
    std::string message = "saved";
    try {
      save_checkpoint(dir, second);
    } catch (const Error& e) {
      code = 0;
      message = e.what();
    } catch (const std::exception& e) {
      code = 2;
      message = e.what();
    }
    [[maybe_unused]] const auto written = ::write(pipe_fds[1], message.data(), message.size());
    ::_exit(code);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << message;
  EXPECT_NE(message.find("optimizer.safetensors"), std::string::npos) << message;

  EXPECT_EQ(entries(root_), std::vector<std::string>{"ckpt"});
  const Checkpoint loaded = load_checkpoint(dir);
  EXPECT_EQ(loaded.trainer_state.step, 1);
  TinyNet restored(8);
  load_weights_into(restored, loaded.weights, "model.safetensors");
  EXPECT_TRUE(torch::equal(restored.fc1->weight, small.fc1->weight));
  AdamW resumed(module_tensors(restored));
  resumed.load_state(loaded.optimizer_state, loaded.optimizer_step);
  EXPECT_TRUE(torch::equal(resumed.state_tensors()[0].second, small_optimizer.state_tensors()[0].second));
}

TEST_F(CheckpointTest, RunDirectoryLatestBestAndPruning) {
  const fs::path run = root_ / "run";
  EXPECT_FALSE(find_latest_checkpoint(run));
  EXPECT_EQ(checkpoint_dir(run, 1234).string(), (run / "checkpoints" / "step-00001234").string());

  torch::manual_seed(1);
  TinyNet net(8);
  AdamW optimizer(module_tensors(net));
  for (int64_t step = 1; step <= 5; ++step) {
    save_checkpoint(checkpoint_dir(run, step), contents(net, optimizer, step));
    mark_latest_checkpoint(run, step);
    if (step == 2) mark_best_checkpoint(run, step);
    prune_checkpoints(run, 2);
  }
  EXPECT_EQ(entries(run / "checkpoints"),
            (std::vector<std::string>{"best", "latest", "step-00000002", "step-00000004",
                                      "step-00000005"}));
  EXPECT_EQ(read_file(run / "checkpoints" / "latest"), "step-00000005\n");
  EXPECT_EQ(find_latest_checkpoint(run).value().string(), checkpoint_dir(run, 5).string());
  EXPECT_EQ(find_best_checkpoint(run).value().string(), checkpoint_dir(run, 2).string());
  EXPECT_EQ(load_checkpoint(*find_latest_checkpoint(run)).trainer_state.step, 5);
  // A model path may be the run, a checkpoint, or one of the run's pointer files.
  EXPECT_EQ(resolve_checkpoint(run).string(), checkpoint_dir(run, 2).string());
  EXPECT_EQ(resolve_checkpoint(checkpoint_dir(run, 4)).string(), checkpoint_dir(run, 4).string());
  EXPECT_EQ(resolve_checkpoint(run / "checkpoints" / "latest").string(), checkpoint_dir(run, 5).string());
  EXPECT_EQ(resolve_checkpoint(run / "checkpoints" / "best").string(), checkpoint_dir(run, 2).string());
  EXPECT_THROW(resolve_checkpoint(run / "checkpoints"), Error);

  fs::remove_all(checkpoint_dir(run, 5));
  const std::string message = checkpoint_error_of([&] { find_latest_checkpoint(run); });
  EXPECT_NE(message.find("latest"), std::string::npos) << message;
  EXPECT_NE(message.find("step-00000005, which does not exist"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata::train
