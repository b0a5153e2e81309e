// `strata serve` as a user runs it: a tiny language model and a tiny summarizer trained here,
// each served on a free port, driven by OpenAI's official Node client
// (tests/serve/openai-client, installed by scripts/install-deps), then stopped with SIGTERM.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.h"
#include "support/server_process.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::ServerProcess;
using test_support::slurp;

const fs::path kClientDir = fs::path(STRATA_FIXTURES_DIR).parent_path() / "serve" / "openai-client";

class CliServe : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_serve_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(test_support::write_tiny_run(
                  dir_, {.seed = 5, .train = "max_steps = 6\nwarmup_steps = 2\neval_every = 6\neval_docs = 2\n"})
                  .exit_code,
              0);
    lm_ = run("lm train --quiet --config " + path("tiny.toml") + " --out " + path("lm") +
              " model.architecture=causal_lm model.pre_norm=true data.block_size=32 train.eval_docs=0");
    summarizer_ = run("train --quiet --config " + path("tiny.toml") + " --out " + path("sum"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult lm_, summarizer_;
};
fs::path CliServe::dir_;
CliResult CliServe::lm_, CliServe::summarizer_;

TEST_F(CliServe, TheOfficialOpenAiClientGetsCompletionsChatStreamsAndErrors) {
  ASSERT_EQ(lm_.exit_code, 0) << lm_.err;
  ASSERT_EQ(summarizer_.exit_code, 0) << summarizer_.err;
  ASSERT_TRUE(fs::exists(kClientDir / "node_modules" / "openai"))
      << "the openai npm package is missing from " << kClientDir << ": run scripts/install-deps";
  fs::create_directories(dir_ / "a");
  fs::create_directories(dir_ / "b");
  ServerProcess lm("--model " + path("lm") + " --name tiny-lm --port 0 --threads 1 --max-body-bytes 4096", dir_ / "a");
  ServerProcess summarizer("--model " + path("sum") + " --name tiny-sum --port 0 --threads 1", dir_ / "b");
  const int lm_port = lm.port(), summarizer_port = summarizer.port();
  ASSERT_GT(lm_port, 0) << lm.err();
  ASSERT_GT(summarizer_port, 0) << summarizer.err();

  const std::string client = "cd " + kClientDir.string() + " && node client.test.mjs http://127.0.0.1:" +
                             std::to_string(lm_port) + "/v1 tiny-lm http://127.0.0.1:" +
                             std::to_string(summarizer_port) + "/v1 tiny-sum >" + path("client.out") + " 2>&1";
  const int status = std::system(client.c_str());
  const std::string report = slurp(dir_ / "client.out");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << report << "\nserver log:\n" << lm.err();
  EXPECT_EQ(report.find("not ok"), std::string::npos) << report;
  EXPECT_NE(report.find("ok - a streamed completion sends the same text as the whole one"), std::string::npos) << report;

  // SIGTERM: a clean stop, exit status 0; the access log saw the requests.
  EXPECT_EQ(lm.terminate(), 0) << lm.err();
  EXPECT_EQ(summarizer.terminate(), 0) << summarizer.err();
  EXPECT_NE(lm.err().find("shut down cleanly"), std::string::npos) << lm.err();
  EXPECT_NE(lm.err().find("POST /v1/chat/completions 200"), std::string::npos) << lm.err();
}

TEST_F(CliServe, BadModelsAndTakenPortsAreClearErrors) {
  ASSERT_EQ(lm_.exit_code, 0) << lm_.err;
  const CliResult no_model = run("serve --model " + path("tok") + " --port 0");
  EXPECT_NE(no_model.exit_code, 0);
  EXPECT_NE(no_model.err.find("not a model"), std::string::npos) << no_model.err;

  fs::create_directories(dir_ / "c");
  ServerProcess first("--model " + path("lm") + " --port 0 --threads 1", dir_ / "c");
  const int port = first.port();
  ASSERT_GT(port, 0) << first.err();
  const CliResult taken = run("serve --model " + path("lm") + " --port " + std::to_string(port));
  EXPECT_NE(taken.exit_code, 0);
  EXPECT_NE(taken.err.find("cannot listen on 127.0.0.1:" + std::to_string(port)), std::string::npos) << taken.err;
  EXPECT_EQ(first.terminate(), 0) << first.err();
}

}  // namespace
}  // namespace strata
