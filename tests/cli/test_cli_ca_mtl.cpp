// A CA-MTL run as a user makes one: a small hand-made multi-task suite, an encoder pretrained
// with masked LM as its base, `strata train` of a ca_mtl model with MT-Uncertainty sampling,
// `--resume`, and `strata mtl eval` with its predictions.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/core/safetensors.h"
#include "strata/core/strings.h"
#include "support/cli.h"
#include "support/weights.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliCaMtl : public test_support::ScratchTest {
 protected:
  CliCaMtl() : ScratchTest("strata_cli_ca_mtl") {}

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Task "topic": a sentence about cats or dogs (the animal's name gives the label away); task
  // "length": the share of the sentence's words that are "very", a regression.
  void write_suite() {
    const char* animals[] = {"cat", "dog"};
    const char* fillers[] = {"the", "small", "old", "happy", "green", "quiet"};
    for (const char* task : {"topic", "length", "animal"}) fs::create_directories(dir_ / "suite/tasks" / task);
    for (const char* split : {"train", "validation", "test"}) {
      const int count = std::string(split) == "train" ? 60 : 16;
      std::string topic, length, corpus;
      for (int i = 0; i < count; ++i) {
        const std::string animal = animals[i % 2];
        const std::string text = std::string(fillers[i % 6]) + " " + animal + " sat near the " + fillers[(i + 2) % 6] +
                                 " house";
        topic += nlohmann::json{{"id", std::to_string(i)}, {"task", "topic"}, {"text", text}, {"label", animal}}.dump() + "\n";
        const int very = i % 4;
        std::string words;
        for (int v = 0; v < very; ++v) words += "very ";
        words += "good words here";
        length += nlohmann::json{{"id", std::to_string(i)}, {"task", "length"}, {"text", words},
                                 {"label", very / (very + 3.0)}}.dump() + "\n";
        corpus += nlohmann::json{{"id", std::to_string(i)}, {"document", text + ". " + words + "."}, {"summary", text}}.dump() + "\n";
      }
      write("suite/tasks/topic/" + std::string(split) + ".jsonl", topic);
      write("suite/tasks/animal/" + std::string(split) + ".jsonl", topic);  // the held-out task: the same data
      write("suite/tasks/length/" + std::string(split) + ".jsonl", length);
      write(std::string("corpus-") + split + ".jsonl", corpus);
    }
    write("suite/tasks.json", R"({"topic": {"kind": "classification", "pair": false, "labels": ["cat", "dog"]},
                                 "length": {"kind": "regression", "pair": false},
                                 "animal": {"kind": "classification", "pair": false, "labels": ["cat", "dog"],
                                            "transfer": true}})");
  }
};

TEST_F(CliCaMtl, TrainsFromAMaskedLmBaseResumesAndScoresTheTestSplit) {
  write_suite();
  ASSERT_EQ(run("tokenizer train --input " + path("corpus-train.jsonl") + " --out " + path("tok") +
                " --vocab-size 300 --type byte-bpe").exit_code, 0);
  const std::string model = "d_model = 32\nheads = 2\nd_ff = 64\nencoder_layers = 2\nmax_positions = 16\ndropout = 0.0\n";
  write("encoder.toml", "[model]\narchitecture = \"encoder\"\nhead = \"token\"\n" + model +
                            "[data]\ntrain = \"" + path("corpus-train.jsonl") + "\"\nvalid = \"" +
                            path("corpus-validation.jsonl") + "\"\ntokenizer = \"" + path("tok") +
                            "\"\nmax_source_tokens = 16\n[train]\nmax_steps = 4\nwarmup_steps = 1\neval_every = 4\n"
                            "max_tokens = 256\nthreads = 1\n");
  const CliResult base = run("pretrain --quiet --config " + path("encoder.toml") + " --out " + path("bert"));
  ASSERT_EQ(base.exit_code, 0) << base.err;

  write("ca_mtl.toml", "[model]\narchitecture = \"ca_mtl\"\n" + model +
                           "[data]\ntrain = \"" + path("suite") + "\"\nvalid = \"" + path("suite") + "\"\ntokenizer = \"" +
                           path("tok") + "\"\n[mtl]\nbatch_size = 8\nsampler = \"mt-uncertainty\"\n"
                           // A task list past the short-string buffer, with spaces: a list read
                           // from a config value once kept views into the freed copy.
                           "tasks = \" topic ,  length  \"\n"
                           "[train]\nmax_steps = 30\nlearning_rate = 3e-3\nwarmup_steps = 3\nschedule = \"constant\"\neval_every = 15\n"
                           "eval_docs = 16\nmetric = \"score\"\nthreads = 1\nbase_model = \"" + path("bert") + "\"\n");
  const CliResult trained = run("train --quiet --config " + path("ca_mtl.toml") + " --out " + path("run"));
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_NE(trained.out.find("120 training and 32 validation examples of 2 tasks"), std::string::npos) << trained.out;
  EXPECT_NE(trained.out.find("loaded "), std::string::npos) << trained.out;  // the masked-LM base
  const nlohmann::json config = nlohmann::json::parse(slurp(dir_ / "run/checkpoints/step-00000030/config.json"));
  EXPECT_EQ(config["model"]["tasks"], "topic:2,length:1");  // filled from the suite
  const std::string metrics = slurp(dir_ / "run/metrics.jsonl");
  for (const char* key : {"\"task/topic\"", "\"task/length\"", "\"score\"", "\"share/topic\"", "\"data_used\""})
    EXPECT_NE(metrics.find(key), std::string::npos) << key;

  // --resume continues the sampler where the checkpoint left it: the same steps 31-40 as a
  // run of 40 steps from the start (a constant learning rate, so the schedule is the same).
  const CliResult longer = run("train --quiet --config " + path("ca_mtl.toml") + " --out " + path("whole") +
                               " train.max_steps=40");
  ASSERT_EQ(longer.exit_code, 0) << longer.err;
  const CliResult resumed = run("train --quiet --resume --config " + path("ca_mtl.toml") + " --out " + path("run") +
                                " train.max_steps=40");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(slurp(dir_ / "run/checkpoints/step-00000040/model.safetensors"),
            slurp(dir_ / "whole/checkpoints/step-00000040/model.safetensors"));

  // Two processes, each its shard of every drawn batch (4 and 3 rows): the mean of per-task
  // means is weighed by the whole batch (TrainTask::shard_loss), so the update is still the
  // one-process one; the mean of the two shards' means would not be.
  // (Float rounding, summed in another order, then grows by about 10x every 10 steps at this
  // learning rate: compare early.)
  for (const char* out : {"six", "parallel"}) {
    const CliResult six = run("train --quiet " + std::string(out[0] == 'p' ? "--nproc 2 " : "") + "--config " +
                              path("ca_mtl.toml") + " --out " + path(out) + " train.max_steps=6 mtl.batch_size=7");
    ASSERT_EQ(six.exit_code, 0) << six.err;
  }
  EXPECT_LT(test_support::max_difference(dir_ / "parallel/checkpoints/step-00000006/model.safetensors",
                                         dir_ / "six/checkpoints/step-00000006/model.safetensors"),
            1e-6);

  const CliResult eval = run("mtl eval --model " + path("whole") + " --split test --predictions " + path("preds.jsonl") +
                             " --json " + path("test.json"));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  const nlohmann::json scores = nlohmann::json::parse(slurp(dir_ / "test.json"));
  EXPECT_EQ(scores["tasks"]["topic"]["examples"], 16);
  EXPECT_EQ(scores["tasks"]["length"]["metric"], "pearson");
  // The animal's name gives the topic away: the model learns it.
  EXPECT_GE(scores["tasks"]["topic"]["value"].get<double>(), 0.9) << eval.out;
  const std::string predictions = slurp(dir_ / "preds.jsonl");
  EXPECT_EQ(std::count(predictions.begin(), predictions.end(), '\n'), 32);
  EXPECT_NE(predictions.find("\"gold\":\"cat\""), std::string::npos);

  // A new task from the trained model, its embedding copied from "topic" (kept frozen here, so
  // the checkpoint shows the copy): the encoder and conditional modules load by name.
  const CliResult adapted = run("train --quiet --config " + path("ca_mtl.toml") + " --out " + path("adapted") +
                                " mtl.tasks=animal mtl.new_task_embedding=topic train.max_steps=2 train.base_model=" +
                                path("whole") + " train.freeze='[\"task_embeddings.*\"]'");
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  EXPECT_NE(adapted.out.find("60 training and 16 validation examples of 1 tasks"), std::string::npos) << adapted.out;
  // The base is the run's best checkpoint (checkpoints/best names it).
  const std::string best(trim(slurp(dir_ / "whole/checkpoints/best")));
  const SafetensorsFile base_weights(dir_ / "whole/checkpoints" / best / "model.safetensors");
  const SafetensorsFile adapted_weights(dir_ / "adapted/checkpoints/step-00000002/model.safetensors");
  const auto copied = adapted_weights.bytes(adapted_weights.entry("task_embeddings.animal"));
  const auto source = base_weights.bytes(base_weights.entry("task_embeddings.topic"));
  EXPECT_TRUE(std::equal(copied.begin(), copied.end(), source.begin(), source.end()));
  const CliResult shown = run("mtl eval --model " + path("adapted") + " --split test");
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  const CliResult wrong = run("train --quiet --config " + path("ca_mtl.toml") + " --out " + path("wrong") +
                              " mtl.tasks=animal mtl.new_task_embedding=colour train.base_model=" + path("whole"));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("its tasks: length, topic"), std::string::npos) << wrong.err;

  const CliResult covsim = run("mtl covsim --model " + path("whole") + " --examples 8 --json " + path("covsim.json"));
  ASSERT_EQ(covsim.exit_code, 0) << covsim.err;
  const nlohmann::json similarity = nlohmann::json::parse(slurp(dir_ / "covsim.json"));
  const double topic = similarity["tasks"]["topic"]["covsim"].get<double>();
  EXPECT_GT(topic, 0.0);
  EXPECT_LE(topic, 1.0);
  EXPECT_NEAR(similarity["pairs"][0][1].get<double>(), topic, 1e-12);  // two tasks: CovSim_0 = CovSim_01
}

TEST_F(CliCaMtl, ALabelTheSuiteDoesNotListIsAnErrorNamingFileLineAndField) {
  write_suite();
  write("suite/tasks/topic/train.jsonl",
        "{\"id\": \"1\", \"text\": \"a cat\", \"label\": \"cat\"}\n{\"id\": \"2\", \"text\": \"a cow\", \"label\": \"cow\"}\n");
  ASSERT_EQ(run("tokenizer train --input " + path("corpus-train.jsonl") + " --out " + path("tok") +
                " --vocab-size 300 --type byte-bpe").exit_code, 0);
  write("ca_mtl.toml", "[model]\narchitecture = \"ca_mtl\"\nd_model = 32\nheads = 2\nmax_positions = 16\n"
                       "[train]\nmax_steps = 2\nwarmup_steps = 1\n");
  const CliResult bad = run("train --config " + path("ca_mtl.toml") + " --out " + path("run") + " data.train=" +
                            path("suite") + " data.tokenizer=" + path("tok"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("train.jsonl:2"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("label"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "run/checkpoints"));
}

}  // namespace
}  // namespace strata
