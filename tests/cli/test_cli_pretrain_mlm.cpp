// `strata pretrain` of an encoder (BERT's masked LM) run as a user would on a small generated
// corpus: the objective follows model.architecture.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/toy_words.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliPretrainMlm : public test_support::ScratchTest {
 protected:
  CliPretrainMlm() : ScratchTest("strata_cli_pretrain_mlm") {}

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
};

TEST_F(CliPretrainMlm, PretrainsAnEncoderWithTheMaskedLmAndWritesACheckpoint) {
  test_support::write_toy_summaries(dir_, 5, 12);
  ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("tok") +
                " --vocab-size 300 --type byte-bpe")
                .exit_code,
            0);
  write("encoder.toml", "[model]\narchitecture = \"encoder\"\nhead = \"token\"\nd_model = 32\nheads = 2\n"
                        "d_ff = 64\nencoder_layers = 1\nmax_positions = 64\n"
                        "[data]\ntrain = \"" + path("train.jsonl") + "\"\nvalid = \"" + path("valid.jsonl") +
                        "\"\ntokenizer = \"" + path("tok") + "\"\nmax_source_tokens = 32\n"
                        "[train]\nmax_steps = 4\nwarmup_steps = 1\neval_every = 2\neval_docs = 8\n"
                        "max_tokens = 512\nthreads = 1\n");
  const CliResult pretrained = run("pretrain --quiet --config " + path("encoder.toml") + " --out " + path("base"));
  ASSERT_EQ(pretrained.exit_code, 0) << pretrained.err;
  EXPECT_NE(pretrained.out.find("validation chunks of at most 32 tokens (masked LM: mlm_probability 0.15)"),
            std::string::npos)
      << pretrained.out;
  EXPECT_NE(pretrained.out.find("stopped after 4 steps (max_steps)"), std::string::npos) << pretrained.out;
  EXPECT_NE(slurp(dir_ / "base/config.toml").find("task = \"mlm\""), std::string::npos);
  EXPECT_NE(slurp(dir_ / "base/metrics.jsonl").find("\"mlm_accuracy\""), std::string::npos);
  const fs::path checkpoint = dir_ / "base/checkpoints/step-00000004";
  ASSERT_TRUE(fs::exists(checkpoint / "model.safetensors"));
  const nlohmann::json model = nlohmann::json::parse(slurp(checkpoint / "config.json"))["model"];
  EXPECT_EQ(model["num_labels"], model["vocab_size"]);  // the head's classes are the vocabulary

  // A metric the task does not report is named at the first evaluation, with the ones it does.
  const CliResult score = run("pretrain --quiet --config " + path("encoder.toml") + " --out " + path("score") +
                              " train.metric=score");
  EXPECT_NE(score.exit_code, 0);
  EXPECT_NE(score.err.find("train.metric: this task's evaluations report no 'score' (they report: loss, mlm_accuracy)"),
            std::string::npos)
      << score.err;

  const CliResult sequence = run("pretrain --config " + path("encoder.toml") + " --out " + path("sequence") +
                                 " model.head=sequence");
  EXPECT_NE(sequence.exit_code, 0);
  EXPECT_NE(sequence.err.find("model.head"), std::string::npos) << sequence.err;
}

}  // namespace
}  // namespace strata
