// `strata pretrain` (BART denoising) run as a user would on a small generated corpus, then a
// summariser fine-tuned from it with `strata train --base`; and `--train-fraction`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliPretrain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_pretrain_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(test_support::write_tiny_run(dir_, {.seed = 11,
                                                  .words = 6,
                                                  .data = "max_source_tokens = 48\nmax_target_tokens = 16\n",
                                                  .train = "max_steps = 4\nwarmup_steps = 1\neval_every = 2\neval_docs = 0\n",
                                                  .decode = "beam_size = 1\nmax_length = 8\n"})
                  .exit_code,
              0);
    pretrained_ = run("pretrain --quiet --config " + path("tiny.toml") + " --out " + path("base"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult pretrained_;
};
fs::path CliPretrain::dir_;
CliResult CliPretrain::pretrained_;

TEST_F(CliPretrain, PretrainsThenASummariserStartsFromIt) {
  ASSERT_EQ(pretrained_.exit_code, 0) << pretrained_.err;
  EXPECT_NE(pretrained_.out.find("40 training and 6 validation documents (denoising: mask_ratio 0.3"),
            std::string::npos)
      << pretrained_.out;
  EXPECT_NE(pretrained_.out.find("trainable params:"), std::string::npos) << pretrained_.out;
  EXPECT_NE(pretrained_.out.find("stopped after 4 steps (max_steps)"), std::string::npos) << pretrained_.out;
  EXPECT_NE(slurp(dir_ / "base/metrics.jsonl").find("\"split\":\"valid\""), std::string::npos);
  EXPECT_NE(slurp(dir_ / "base/config.toml").find("task = \"denoise\""), std::string::npos);

  const CliResult tuned = run("train --quiet --config " + path("tiny.toml") + " --base " + path("base") + " --out " +
                              path("tuned") + " --train-fraction 0.25 train.max_steps=2 train.eval_every=2");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("loaded "), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("data: using 10 of 40 training examples (train_fraction 0.25)"), std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find("10 training and 6 validation documents\n"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("stopped after 2 steps"), std::string::npos) << tuned.out;
}

TEST_F(CliPretrain, ATrainFractionOutsideZeroToOneNamesTheKey) {
  const CliResult bad = run("train --config " + path("tiny.toml") + " --out " + path("bad") + " --train-fraction 1.5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("data.train_fraction"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

TEST_F(CliPretrain, ATokenizerWithoutMaskIsAClearError) {
  fs::copy(dir_ / "tok", dir_ / "tok-nomask");
  nlohmann::json sidecar = nlohmann::json::parse(slurp(dir_ / "tok-nomask/strata-tokenizer.json"));
  sidecar["special_tokens"]["mask"] = "";
  std::ofstream(dir_ / "tok-nomask/strata-tokenizer.json") << sidecar.dump();
  const CliResult refused = run("pretrain --config " + path("tiny.toml") + " --out " + path("nomask") +
                                " data.tokenizer=" + path("tok-nomask"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find(path("tok-nomask")), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no mask token"), std::string::npos) << refused.err;
}

TEST_F(CliPretrain, OnlySeq2SeqModelsPretrain) {
  const CliResult lm = run("pretrain --config " + path("tiny.toml") + " --out " + path("lm") +
                           " model.architecture=causal_lm");
  EXPECT_NE(lm.exit_code, 0);
  EXPECT_NE(lm.err.find("seq2seq"), std::string::npos) << lm.err;
}

}  // namespace
}  // namespace strata
