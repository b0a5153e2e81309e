// Crash consistency: `strata train` killed with SIGKILL at random moments, saving a checkpoint
// every step, many times over. After every kill the run directory holds a whole checkpoint
// under `latest` (never a mix of two saves), and the run resumed to its end is bit for bit the
// run that was never killed.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/safetensors.h"
#include "support/cli.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

// Starts the strata binary with `args`, its output discarded; the child's pid.
pid_t start_strata(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(STRATA_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(STRATA_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

// What `latest` names is one save's whole checkpoint: every file parses, and the step in the
// directory's name, in trainer_state.json and in the optimizer file's metadata agree.
void expect_whole_latest(const fs::path& run) {
  const std::string name = slurp(run / "checkpoints/latest");
  ASSERT_FALSE(name.empty());
  const fs::path dir = run / "checkpoints" / name.substr(0, name.find('\n'));
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  const int step = std::stoi(dir.filename().string().substr(5));
  const nlohmann::json state = nlohmann::json::parse(slurp(dir / "trainer_state.json"));
  EXPECT_EQ(state.at("step"), step) << dir;
  const SafetensorsFile optimizer(dir / "optimizer.safetensors");
  EXPECT_EQ(optimizer.metadata().at("step"), std::to_string(step)) << dir;
  const SafetensorsFile model(dir / "model.safetensors");
  EXPECT_FALSE(model.entries().empty());
  EXPECT_NO_THROW(nlohmann::json::parse(slurp(dir / "config.json")));
}

class CliCheckpointKill : public test_support::ScratchTest {
 protected:
  CliCheckpointKill() : ScratchTest("strata_cli_checkpoint_kill") {}
};

TEST_F(CliCheckpointKill, KilledAtRandomMomentsTheRunAlwaysLoadsAndResumesExactly) {
  ASSERT_EQ(test_support::write_tiny_run(dir_, {.train = "max_steps = 60\nwarmup_steps = 2\neval_every = 1\n"
                                                         "eval_docs = 0\nkeep_checkpoints = 2\n"})
                .exit_code,
            0);
  const std::string config = (dir_ / "tiny.toml").string();
  const CliResult whole = run("train --quiet --config " + config + " --out " + (dir_ / "whole").string());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;

  const fs::path run_dir = dir_ / "killed";
  std::mt19937 random(20261126);
  std::uniform_int_distribution<int> delay_ms(0, 60);
  int kills = 0;
  for (int attempt = 0; attempt < 14; ++attempt) {
    std::vector<std::string> args{"train", "--quiet", "--config", config, "--out", run_dir.string()};
    if (fs::exists(run_dir / "checkpoints/latest")) {
      args.push_back("--resume");
    } else {
      fs::remove_all(run_dir);  // killed before its first checkpoint: a user starts again
    }
    const std::string before = fs::exists(run_dir / "checkpoints/latest") ? slurp(run_dir / "checkpoints/latest") : "";
    const pid_t pid = start_strata(args);
    // Once this run has saved a checkpoint of its own, it is saving one every few
    // milliseconds: kill it at a random moment of that cycle.
    int status = 0;
    bool exited = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!exited && std::chrono::steady_clock::now() < deadline &&
           !(fs::exists(run_dir / "checkpoints/latest") && slurp(run_dir / "checkpoints/latest") != before)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      exited = ::waitpid(pid, &status, WNOHANG) == pid;
    }
    if (!exited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
      exited = ::waitpid(pid, &status, WNOHANG) == pid;
    }
    if (!exited) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ++kills;
    }
    ASSERT_TRUE(fs::exists(run_dir / "checkpoints/latest")) << "attempt " << attempt;
    expect_whole_latest(run_dir);
  }
  EXPECT_GE(kills, 12);

  const CliResult resumed = run("train --quiet --resume --config " + config + " --out " + run_dir.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(slurp(run_dir / "checkpoints/step-00000060/model.safetensors"),
            slurp(dir_ / "whole/checkpoints/step-00000060/model.safetensors"));
  EXPECT_EQ(slurp(run_dir / "checkpoints/step-00000060/optimizer.safetensors"),
            slurp(dir_ / "whole/checkpoints/step-00000060/optimizer.safetensors"));
  // Nothing of the interrupted saves is left behind.
  for (const fs::directory_entry& entry : fs::directory_iterator(run_dir / "checkpoints")) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp-"), std::string::npos) << name;
    EXPECT_EQ(name.find(".old-"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace strata
