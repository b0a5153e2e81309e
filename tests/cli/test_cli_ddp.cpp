// `strata train --nproc 2`: data-parallel training on c10d's Gloo group over loopback, as a
// user runs it. Two processes give one process's weights on the same batches; a worker that
// dies or hangs (even half way through a store query) is named and stops the run; the run
// resumes with another world size.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/tiny_run.h"
#include "support/weights.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

// Binds `fd` to a free port of 127.0.0.1 and listens on it; the port, or 0 on failure.
int listen_on_loopback(int fd) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return 0;
  return ntohs(address.sin_port);
}

// A port no one listens on now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int port = listen_on_loopback(fd);
  ::close(fd);
  return port;
}

class CliDdp : public test_support::ScratchTest {
 protected:
  CliDdp() : ScratchTest("strata_cli_ddp") {}

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path checkpoint(const std::string& run, int step, const char* file) const {
    return dir_ / run / "checkpoints" / fmt_step(step) / file;
  }
  static std::string fmt_step(int step) {
    char name[32];
    std::snprintf(name, sizeof name, "step-%08d", step);
    return name;
  }
  // `strata train --quiet FLAGS --config CONFIG --out OUT` succeeds (its errors shown if not).
  bool trains(const std::string& flags, const std::string& config, const std::string& out) {
    const CliResult result = run("train --quiet " + flags + " --config " + path(config) + " --out " + path(out));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.exit_code == 0;
  }
  // Weights and optimizer state of two runs at `step`, within 1e-5.
  void expect_same_training(const std::string& a, const std::string& b, int step) {
    EXPECT_LT(test_support::max_difference(checkpoint(a, step, "model.safetensors"), checkpoint(b, step, "model.safetensors")), 1e-5);
    EXPECT_LT(test_support::max_difference(checkpoint(a, step, "optimizer.safetensors"), checkpoint(b, step, "optimizer.safetensors")),
              1e-5);
  }
  // The tiny seq2seq run of the CLI tests without dropout (each rank draws its own masks).
  void write_seq2seq_run() {
    ASSERT_EQ(test_support::write_tiny_run(dir_, {.train = "max_steps = 6\nwarmup_steps = 2\neval_every = 3\n"
                                                           "eval_docs = 4\nlog_every = 2\n"})
                  .exit_code,
              0);
    std::string text = slurp(dir_ / "tiny.toml");
    text.replace(text.find("[model]\n"), 8, "[model]\ndropout = 0.0\n");
    std::ofstream(dir_ / "tiny.toml") << text;
  }
  // `strata train --nproc 2` with rank 1 stopping itself in step 4 (STRATA_DDP_FAULT=KIND:1:4):
  // rank 0 names it after the 2 s timeout, the launcher ends it, and step 3's checkpoint stays.
  void expect_rank1_named_at_step4(const std::string& kind) {
    write_seq2seq_run();
    const CliResult failed = test_support::run_strata(
        "train --quiet --nproc 2 --ddp-timeout 2 --config " + path("tiny.toml") + " --out " + path("hung"), dir_,
        "STRATA_DDP_FAULT=" + kind + ":1:4");
    EXPECT_NE(failed.exit_code, 0);
    EXPECT_NE(failed.err.find("rank 0: the loss all-reduce of step 4 failed: rank 1 stopped responding"),
              std::string::npos)
        << failed.err;
    EXPECT_NE(failed.err.find("rank 1 (pid"), std::string::npos) << failed.err;  // the launcher ended it
    EXPECT_EQ(slurp(dir_ / "hung/checkpoints/latest"), fmt_step(3) + "\n");
  }
};

TEST_F(CliDdp, TwoProcessesTrainTheSeq2seqAsOneProcessOnTheSameBatches) {
  write_seq2seq_run();
  ASSERT_TRUE(trains("", "tiny.toml", "one"));
  const CliResult two = run("train --quiet --nproc 2 --config " + path("tiny.toml") + " --out " + path("two"));
  ASSERT_EQ(two.exit_code, 0) << two.err;
  expect_same_training("one", "two", 3);
  expect_same_training("one", "two", 6);
  // Rank 0 alone prints and logs; its train lines say what the run cost in communication.
  EXPECT_NE(two.out.find("data-parallel: 2 processes"), std::string::npos) << two.out;
  EXPECT_EQ(two.out.find("stopped after 6 steps"), two.out.rfind("stopped after 6 steps")) << two.out;
  int train_lines = 0;
  std::istringstream lines(slurp(dir_ / "two/metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    const auto json = nlohmann::json::parse(line);
    if (json.at("split") != "train") continue;
    ++train_lines;
    EXPECT_EQ(json.at("world_size"), 2);
    EXPECT_GT(json.at("allreduce_bytes_per_step").get<double>(), 4 * 30000);  // the model's ~39k floats
    EXPECT_GE(json.at("comm_wait_share").get<double>(), 0.0);
  }
  EXPECT_EQ(train_lines, 3);  // log_every 2 of 6 steps: once, not once per rank
}

TEST_F(CliDdp, TwoProcessesTrainTheEncoderWithAccumulationAsOneProcess) {
  ASSERT_EQ(test_support::write_tiny_run(dir_, {}).exit_code, 0);
  write("encoder.toml",
        "[model]\narchitecture = \"encoder\"\nhead = \"marker\"\nnum_labels = 2\nd_model = 32\nheads = 2\n"
        "d_ff = 64\nencoder_layers = 1\nmax_positions = 256\ndropout = 0.0\n"
        "[data]\ntask = \"extractive\"\ntrain = \"" + path("train.jsonl") + "\"\nvalid = \"" + path("valid.jsonl") +
            "\"\ntokenizer = \"" + path("tok") + "\"\nmax_source_tokens = 128\n"
            "[train]\nmax_steps = 4\nwarmup_steps = 1\neval_every = 4\neval_docs = 4\nmax_tokens = 700\n"
            "accumulation = 2\nthreads = 1\n");
  ASSERT_TRUE(trains("", "encoder.toml", "one"));
  ASSERT_TRUE(trains("--nproc 2", "encoder.toml", "two"));
  expect_same_training("one", "two", 4);
}

TEST_F(CliDdp, AKilledWorkerIsNamedAndTheRunResumesFromItsLastCheckpointOnOneProcess) {
  write_seq2seq_run();
  ASSERT_TRUE(trains("", "tiny.toml", "one"));
  // Rank 1 kills itself (SIGKILL) in the middle of step 5, after its forward pass.
  const CliResult failed = test_support::run_strata(
      "train --quiet --nproc 2 --ddp-timeout 20 --config " + path("tiny.toml") + " --out " + path("killed"), dir_,
      "STRATA_DDP_FAULT=kill:1:5");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("rank 1 (pid"), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("rank 0: the loss all-reduce of step 5 failed: rank 1 stopped responding"),
            std::string::npos)
      << failed.err;
  EXPECT_EQ(slurp(dir_ / "killed/checkpoints/latest"), fmt_step(3) + "\n");
  // Another world size takes the run on from step 3 and ends where the uninterrupted run did.
  ASSERT_TRUE(trains("--resume", "tiny.toml", "killed"));
  expect_same_training("one", "killed", 6);
}

TEST_F(CliDdp, OneProcessRunResumesOnTwoProcessesExactly) {
  write_seq2seq_run();
  ASSERT_TRUE(trains("", "tiny.toml", "one"));
  ASSERT_TRUE(trains("train.max_steps=3", "tiny.toml", "run"));
  ASSERT_TRUE(trains("--resume --nproc 2", "tiny.toml", "run"));
  expect_same_training("one", "run", 6);
}

TEST_F(CliDdp, AHungWorkerIsNamedWithinTheTimeout) {
  // Rank 1 stops itself (SIGSTOP) in step 4: rank 0's collective times out after 2 s.
  expect_rank1_named_at_step4("hang");
}

TEST_F(CliDdp, AWorkerStoppedInTheMiddleOfAStoreQueryIsNamedAndTheRunStops) {
  // Rank 1 sends the store half a query, then stops: the store, which rank 0 hosts and which
  // reads one query at a time, waits on it for good. Rank 0 still names rank 1 and exits.
  expect_rank1_named_at_step4("stall");
}

TEST_F(CliDdp, APortInUseIsAClearError) {
  write_seq2seq_run();
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  const int port = listen_on_loopback(taken);
  ASSERT_GT(port, 0);
  const CliResult failed = run("train --quiet --nproc 2 --ddp-timeout 3 --master 127.0.0.1:" + std::to_string(port) +
                               " --config " + path("tiny.toml") + " --out " + path("run"));
  ::close(taken);
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.err.find("127.0.0.1:" + std::to_string(port) + ": the port is already in use"), std::string::npos)
      << failed.err;
  EXPECT_FALSE(fs::exists(dir_ / "run/checkpoints"));
}

TEST_F(CliDdp, AWorkerWhosePeersNeverJoinStopsWithAnErrorAfterTheTimeout) {
  write_seq2seq_run();
  const CliResult lonely = test_support::run_strata(
      "train --quiet --config " + path("tiny.toml") + " --out " + path("lonely"), dir_,
      "WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(free_port()) + " STRATA_DDP_TIMEOUT=2");
  EXPECT_EQ(lonely.exit_code, 1);
  EXPECT_NE(lonely.err.find("rank 0: joining the process group failed: rank 1 stopped responding"), std::string::npos)
      << lonely.err;
}

TEST_F(CliDdp, BadLaunchSettingsAreRefusedByName) {
  write_seq2seq_run();
  const CliResult master = run("train --nproc 2 --master host:99999 --config " + path("tiny.toml") + " --out " + path("a"));
  EXPECT_NE(master.exit_code, 0);
  EXPECT_NE(master.err.find("--master: '99999' is not a port"), std::string::npos) << master.err;
  const CliResult nodes = run("train --nnodes 2 --node-rank 1 --config " + path("tiny.toml") + " --out " + path("b"));
  EXPECT_NE(nodes.exit_code, 0);
  EXPECT_NE(nodes.err.find("--master: give HOST:PORT"), std::string::npos) << nodes.err;
  const CliResult rank = test_support::run_strata("train --config " + path("tiny.toml") + " --out " + path("c"), dir_,
                                                  "WORLD_SIZE=2 RANK=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1");
  EXPECT_NE(rank.exit_code, 0);
  EXPECT_NE(rank.err.find("RANK: 2 is not below WORLD_SIZE 2"), std::string::npos) << rank.err;
}

}  // namespace
}  // namespace strata
