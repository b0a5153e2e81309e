// `strata train`, `summarize`, `eval summarize`, `lm train` and `lm eval` run as a user would,
// on a small generated dataset with a tiny model: the commands, their files and their errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
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

class CliTrain : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_train_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "doc.md") << "# tool\n\nlist the contents of a directory. print files.\n";
    ASSERT_EQ(test_support::write_tiny_run(dir_, {.decode = "beam_size = 2\nmax_length = 8\n"}).exit_code, 0);
    trained_ = run("train --quiet --config " + path("tiny.toml") + " --out " + path("run"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult trained_;
};
fs::path CliTrain::dir_;
CliResult CliTrain::trained_;

TEST_F(CliTrain, TrainWritesCheckpointsMetricsAndTheEffectiveConfig) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  EXPECT_NE(trained_.out.find("trainable params:"), std::string::npos) << trained_.out;
  EXPECT_NE(trained_.out.find("stopped after 6 steps (max_steps)"), std::string::npos) << trained_.out;
  for (const char* file : {"run/config.toml", "run/metrics.jsonl", "run/checkpoints/latest", "run/checkpoints/best",
                           "run/checkpoints/step-00000006/model.safetensors",
                           "run/checkpoints/step-00000006/tokenizer/strata-tokenizer.json"})
    EXPECT_TRUE(fs::exists(dir_ / file)) << file;
  EXPECT_NE(slurp(dir_ / "run/metrics.jsonl").find("\"rougeL\""), std::string::npos);
  EXPECT_NE(slurp(dir_ / "run/config.toml").find("max_steps = 6"), std::string::npos);
}

TEST_F(CliTrain, SummarizeADocumentAndEvaluateADataset) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult one = run("summarize --model " + path("run") + " --input " + path("doc.md") + " --beam 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(std::count(one.out.begin(), one.out.end(), '\n'), 1) << one.out;

  const CliResult lines = run("summarize --model " + path("run") + " --input " + path("valid.jsonl"));
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_EQ(std::count(lines.out.begin(), lines.out.end(), '\n'), 6);
  EXPECT_NO_THROW(nlohmann::json::parse(lines.out.substr(0, lines.out.find('\n'))).at("prediction"));

  const CliResult eval = run("eval summarize --model " + path("run") + " --data " + path("valid.jsonl") +
                             " --out " + path("eval"));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_NE(eval.out.find("rougeLsum"), std::string::npos) << eval.out;
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "eval/rouge.json"));
  EXPECT_EQ(report["count"], 6);
  EXPECT_TRUE(report["scores"]["rouge1"]["fmeasure"].contains("low"));
  EXPECT_TRUE(fs::exists(dir_ / "eval/predictions.jsonl"));
}

TEST_F(CliTrain, PastTheExpectedMinutesTrainingWarnsOnceAndGoesOnToTheLastStep) {
  const CliResult r = run("train --config " + path("tiny.toml") + " --out " + path("expected") +
                          " train.expected_minutes=0.000001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string warning = "past the expected 0.0 (train.expected_minutes)";
  const std::size_t first = r.err.find(warning);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(warning, first + 1), std::string::npos) << "warned more than once:\n" << r.err;
  EXPECT_NE(r.out.find("stopped after 6 steps (max_steps)"), std::string::npos) << r.out;
}

TEST_F(CliTrain, ResumeOfAFinishedRunStopsAtOnceAndARerunWithoutItIsRefused) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult again = run("train --quiet --config " + path("tiny.toml") + " --out " + path("run"));
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("--resume"), std::string::npos) << again.err;
  const CliResult resumed = run("train --quiet --resume --config " + path("tiny.toml") + " --out " + path("run"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("stopped after 6 steps"), std::string::npos) << resumed.out;
}

TEST_F(CliTrain, ConfigTypoNamesTheClosestKey) {
  const CliResult typo = run("train --config " + path("tiny.toml") + " --out " + path("typo") + " train.learning_rte=1e-3");
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_NE(typo.err.find("train.learning_rte"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean 'train.learning_rate'"), std::string::npos) << typo.err;
  EXPECT_FALSE(fs::exists(dir_ / "typo"));
}

TEST_F(CliTrain, PrintConfigShowsDefaultsAndOverrides) {
  const CliResult printed = run("train --config " + path("tiny.toml") + " --print-config train.max_steps=9");
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_NE(printed.out.find("max_steps = 9"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find("label_smoothing = 0.1"), std::string::npos) << printed.out;
}

TEST_F(CliTrain, AModelOfAnotherArchitectureIsAClearError) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult lm = run("lm eval --model " + path("run") + " --data " + path("valid.jsonl"));
  EXPECT_NE(lm.exit_code, 0);
  EXPECT_NE(lm.err.find("seq2seq"), std::string::npos) << lm.err;
  EXPECT_NE(lm.err.find("causal_lm"), std::string::npos) << lm.err;
  const CliResult not_a_model = run("summarize --model " + path("tok") + " --input " + path("doc.md"));
  EXPECT_NE(not_a_model.exit_code, 0);
  EXPECT_NE(not_a_model.err.find("not a model"), std::string::npos) << not_a_model.err;
}

TEST_F(CliTrain, LanguageModelTrainsAndReportsPerplexity) {
  const CliResult trained = run("lm train --quiet --config " + path("tiny.toml") + " --out " + path("lm") +
                                " model.architecture=causal_lm model.pre_norm=true data.block_size=16 train.eval_docs=0");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const CliResult eval = run("lm eval --json --model " + path("lm") + " --data " + path("valid.jsonl"));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const nlohmann::json result = nlohmann::json::parse(eval.out);
  EXPECT_GT(result["perplexity"].get<double>(), 1.0);
  EXPECT_LT(result["perplexity"].get<double>(), 300.0);  // below the uniform guess over the vocabulary
  const CliResult wrong = run("lm train --quiet --config " + path("tiny.toml") + " --out " + path("lm2"));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("causal_lm"), std::string::npos) << wrong.err;
}

// The JSON lines of `strata lm score`, each checked for its fields.
std::vector<nlohmann::json> score_lines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line));
    EXPECT_EQ(lines.back()["position"].get<std::size_t>(), lines.size());
    EXPECT_LE(lines.back()["logprob"].get<double>(), 0.0);
    EXPECT_TRUE(lines.back()["text"].is_string());
  }
  return lines;
}

TEST_F(CliTrain, LmScoreShowsCausalityFromOutsideAndCachedGenerationMatchesRerunning) {
  // A Block-State Transformer LM trained through `strata train`: one pass over the text, and
  // the scores of a text's first half are the first scores of the whole text.
  const CliResult trained =
      run("train --quiet --config " + path("tiny.toml") + " --out " + path("bst") +
          " model.architecture=bst_lm model.pre_norm=true model.heads=4 model.decoder_layers=2 'model.bst_layers=\"1\"' "
          "model.bst_window=8 data.block_size=32 train.eval_docs=0");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  std::string text;
  for (int i = 0; i < 12; ++i) text += "list the contents of a directory and print the files. ";
  std::ofstream(dir_ / "long.txt") << text;
  std::ofstream(dir_ / "half.txt") << text.substr(0, text.size() / 2);
  const CliResult whole = run("lm score --model " + path("bst") + " --text " + path("long.txt"));
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_NE(whole.err.find("in one pass"), std::string::npos) << whole.err;
  const CliResult half = run("lm score --model " + path("bst") + " --text " + path("half.txt") + " --out " +
                             path("half.jsonl"));
  ASSERT_EQ(half.exit_code, 0) << half.err;
  const std::vector<nlohmann::json> all = score_lines(whole.out), first = score_lines(slurp(dir_ / "half.jsonl"));
  ASSERT_GT(all.size(), 64u);  // several blocks of 8, past the training blocks of 32
  ASSERT_GT(first.size(), 8u);
  // The half's last token may be cut differently by the tokenizer: compare the ones before.
  for (std::size_t i = 0; i + 1 < first.size(); ++i) {
    EXPECT_EQ(first[i]["token"], all[i]["token"]) << i;
    EXPECT_NEAR(first[i]["logprob"].get<double>(), all[i]["logprob"].get<double>(), 1e-4) << i;
  }
  // In windows of 16 tokens, each starting afresh: the first window's scores are the one pass's,
  // later ones lose their context.
  const CliResult windows = run("lm score --window 16 --model " + path("bst") + " --text " + path("long.txt"));
  ASSERT_EQ(windows.exit_code, 0) << windows.err;
  EXPECT_NE(windows.err.find("in windows of 16"), std::string::npos) << windows.err;
  const std::vector<nlohmann::json> windowed = score_lines(windows.out);
  ASSERT_EQ(windowed.size(), all.size());
  for (std::size_t i = 0; i < 15; ++i)
    EXPECT_NEAR(windowed[i]["logprob"].get<double>(), all[i]["logprob"].get<double>(), 1e-4) << i;
  double differing = 0;
  for (std::size_t i = 15; i < all.size(); ++i)
    differing += std::abs(windowed[i]["logprob"].get<double>() - all[i]["logprob"].get<double>()) > 1e-4;
  EXPECT_GT(differing, 0);
  const CliResult missing = run("lm score --model " + path("bst") + " --text " + path("nothing.txt"));
  EXPECT_NE(missing.exit_code, 0);

  // Generation continues a prompt; with the cache (kept keys, the SSM's recurrence) the tokens
  // are those of rerunning the whole sequence every step.
  const std::string generate = "lm generate --json --max-length 20 --model " + path("bst") +
                               " --prompt 'list the contents of a directory and'";
  const CliResult cached = run(generate), rerun = run(generate + " --no-cache");
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const nlohmann::json a = nlohmann::json::parse(cached.out), b = nlohmann::json::parse(rerun.out);
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_GT(a["tokens"].size(), 0u);
  EXPECT_TRUE(a["cache"].get<bool>());
  EXPECT_FALSE(b["cache"].get<bool>());
  // The prompt's cost apart from the later steps': the first step ends inside the whole call,
  // and decoding ran at least a step per token written.
  for (const nlohmann::json& g : {a, b}) {
    EXPECT_GE(g["steps"].get<std::int64_t>(), static_cast<std::int64_t>(g["tokens"].size()));
    EXPECT_GT(g["first_step_seconds"].get<double>(), 0);
    EXPECT_LE(g["first_step_seconds"].get<double>(), g["seconds"].get<double>());
    EXPECT_GT(g["later_steps_per_second"].get<double>(), 0);
  }
  EXPECT_NE(run("lm generate --model " + path("bst")).exit_code, 0);  // no prompt
}

// LoRA on a trained base: only the adapter trains, its file loads onto that base (and
// reproduces the adapted run's summaries) and is refused on another base of the same sizes.
TEST_F(CliTrain, LoraOnABaseWritesAnAdapterFileThatLoadsOntoItsBaseOnly) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult lora = run("train --quiet --config " + path("tiny.toml") + " --base " + path("run") +
                             " --adapter lora --out " + path("lora") + " train.learning_rate=0.05");
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  // q_proj and v_proj of the encoder self-, decoder self- and cross-attention
  EXPECT_NE(lora.out.find("adapter: lora on 6 linear maps"), std::string::npos) << lora.out;
  EXPECT_NE(lora.out.find("adapter: loads onto " + path("run")), std::string::npos) << lora.out;
  ASSERT_TRUE(fs::exists(dir_ / "lora/adapter.safetensors"));

  const std::string docs = " --input " + path("valid.jsonl") + " --beam 1";
  const CliResult adapted = run("summarize --model " + path("lora") + docs);
  const CliResult on_base = run("summarize --model " + path("run") + " --adapter " + path("lora/adapter.safetensors") + docs);
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  ASSERT_EQ(on_base.exit_code, 0) << on_base.err;
  EXPECT_EQ(on_base.out, adapted.out);

  const CliResult other = run("train --quiet --config " + path("tiny.toml") + " --out " + path("other") + " train.seed=9");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const CliResult refused = run("summarize --model " + path("other") + " --adapter " + path("lora/adapter.safetensors") + docs);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("another base model"), std::string::npos) << refused.err;
}

// Prefix-tuning as an adapter: `--adapter prefix` builds the model with prefixes
// (adapter.length of them), trains only them, and leaves the one adapter file format, which
// builds the prefixed model on its base and summarises as the run does.
TEST_F(CliTrain, PrefixAdapterOnABaseLoadsOntoItsBase) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult prefix = run("train --quiet --config " + path("tiny.toml") + " --base " + path("run") +
                               " --adapter prefix --out " + path("prefix") + " adapter.length=4 train.learning_rate=0.05");
  ASSERT_EQ(prefix.exit_code, 0) << prefix.err;
  EXPECT_NE(prefix.out.find("adapter: prefix, built into the model"), std::string::npos) << prefix.out;
  EXPECT_NE(prefix.out.find("adapter: loads onto " + path("run")), std::string::npos) << prefix.out;
  const SafetensorsFile file(dir_ / "prefix/adapter.safetensors");
  EXPECT_EQ(file.metadata().at("format"), "strata-adapter/1");
  EXPECT_NE(file.metadata().at("model").find("\"prefix_length\":4"), std::string::npos);

  const std::string docs = " --input " + path("valid.jsonl") + " --beam 1";
  const CliResult adapted = run("summarize --model " + path("prefix") + docs);
  const CliResult on_base =
      run("summarize --model " + path("run") + " --adapter " + path("prefix/adapter.safetensors") + docs);
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  ASSERT_EQ(on_base.exit_code, 0) << on_base.err;
  EXPECT_EQ(on_base.out, adapted.out);
  const CliResult wrong = run("train --quiet --config " + path("tiny.toml") + " --adapter pal --out " + path("pal"));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("PALs belong to encoder models"), std::string::npos) << wrong.err;
}

TEST_F(CliTrain, BottleneckAdaptersTrainALanguageModel) {
  const CliResult trained = run("lm train --quiet --config " + path("tiny.toml") + " --adapter bottleneck --out " +
                                path("lm-bottleneck") + " model.architecture=causal_lm data.block_size=16 adapter.size=8");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_NE(trained.out.find("adapter: bottleneck on 2 linear maps"), std::string::npos) << trained.out;
  ASSERT_TRUE(fs::exists(dir_ / "lm-bottleneck/adapter.safetensors"));
  const CliResult eval = run("lm eval --json --model " + path("lm-bottleneck") + " --data " + path("valid.jsonl"));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_GT(nlohmann::json::parse(eval.out)["perplexity"].get<double>(), 1.0);
  const CliResult lora = run("lm train --quiet --config " + path("tiny.toml") + " --adapter lora --out " +
                             path("lm-lora") + " model.architecture=causal_lm data.block_size=16 adapter.rank=2");
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  EXPECT_NE(lora.out.find("adapter: lora on 2 linear maps"), std::string::npos) << lora.out;  // q_proj, v_proj
  const CliResult lora_eval = run("lm eval --json --model " + path("lm-lora") + " --data " + path("valid.jsonl"));
  ASSERT_EQ(lora_eval.exit_code, 0) << lora_eval.err;
  const CliResult unknown = run("train --quiet --config " + path("tiny.toml") + " --adapter lorra --out " + path("x"));
  EXPECT_NE(unknown.exit_code, 0);
}

}  // namespace
}  // namespace strata
