// `strata train` of an extractive encoder (data.task=extractive) and `strata extract` with it,
// run as a user would on a small generated dataset: the report, its peers, the files, the errors;
// and `strata serve` of extractive models (the encoder and thesis ch. 2's sent_clf).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/safetensors.h"
#include "support/cli.h"
#include "support/server_process.h"
#include "support/toy_words.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliExtract : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_extract_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    test_support::ToyWords toy(11);
    // Four sentences per document; the second is the summary, so the oracle picks it.
    for (const char* split : {"train", "valid"}) {
      std::ofstream out(dir_ / (std::string(split) + ".jsonl"));
      for (int i = 0; i < (split[0] == 't' ? 40 : 6); ++i) {
        std::string body, summary;
        for (int s = 0; s < 4; ++s) {
          const std::string sentence = toy.words(6) + ".";
          body += std::string(s ? " " : "") + sentence;
          if (s == 1) summary = sentence;
        }
        out << nlohmann::json{{"document", body}, {"summary", summary}}.dump() << "\n";
      }
    }
    ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("tok") +
                  " --vocab-size 300 --type byte-bpe")
                  .exit_code,
              0);
    std::ofstream(dir_ / "extractive.toml")
        << "[model]\narchitecture = \"encoder\"\nhead = \"marker\"\nnum_labels = 2\nd_model = 32\nheads = 2\n"
           "d_ff = 64\nencoder_layers = 1\nmax_positions = 256\n"
           "[data]\ntask = \"extractive\"\ntrain = \""
        << path("train.jsonl") << "\"\nvalid = \"" << path("valid.jsonl") << "\"\ntokenizer = \"" << path("tok")
        << "\"\nmax_source_tokens = 192\n"
           "[extract]\ntop_k = 2\n"
           "[train]\nmax_steps = 6\nwarmup_steps = 2\neval_every = 3\neval_docs = 4\nmax_tokens = 1024\nthreads = 1\n";
    trained_ = run("train --quiet --config " + path("extractive.toml") + " --out " + path("run"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult trained_;
};
fs::path CliExtract::dir_;
CliResult CliExtract::trained_;

TEST_F(CliExtract, TrainingAnExtractiveEncoderReportsValidationRouge) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  EXPECT_TRUE(fs::exists(dir_ / "run/checkpoints/latest"));
  const std::string metrics = slurp(dir_ / "run/metrics.jsonl");
  EXPECT_NE(metrics.find("\"rouge1\""), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\"rougeL\""), std::string::npos) << metrics;
}

TEST_F(CliExtract, ExtractsWithTheRunsSettingsAndScoresLeadAndOracleBeside) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult result = run("extract --quiet --model " + path("run") + " --data " + path("valid.jsonl") +
                               " --out " + path("preds.jsonl") + " --json " + path("rouge.json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* row : {"model (top-2)", "lead-2", "oracle (<= 3 sentences)", "rouge1", "rougeL"})
    EXPECT_NE(result.out.find(row), std::string::npos) << row << "\n" << result.out;

  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "rouge.json"));
  EXPECT_EQ(report["count"], 6);
  EXPECT_EQ(report["top_k"], 2);
  EXPECT_EQ(report["trigram_blocking"], false);
  const auto f1 = [&](const char* system) { return report["systems"][system]["scores"]["rouge1"]["fmeasure"]; };
  for (const char* system : {"model", "lead", "oracle"}) EXPECT_TRUE(f1(system).contains("low")) << system;
  // The summary is one of the document's sentences: the oracle finds it exactly.
  EXPECT_NEAR(f1("oracle")["mean"].get<double>(), 1.0, 1e-9);
  EXPECT_GE(f1("oracle")["mean"].get<double>(), f1("model")["mean"].get<double>());

  std::istringstream lines(slurp(dir_ / "preds.jsonl"));
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json prediction = nlohmann::json::parse(line);
    const auto selected = prediction["selected"].get<std::vector<std::size_t>>();
    EXPECT_EQ(selected.size(), 2u) << line;
    EXPECT_LT(selected[0], selected[1]) << line;  // document order
    const std::string text = prediction["prediction"];
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << line;  // one sentence per line
    EXPECT_TRUE(prediction.contains("reference"));
    ++count;
  }
  EXPECT_EQ(count, 6);
}

TEST_F(CliExtract, FlagsOverrideTheRunsSelection) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult result = run("extract --quiet --model " + path("run") + " --data " + path("valid.jsonl") +
                               " --top-k 1 --trigram-blocking --limit 3 --json " + path("one.json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("model (top-1, trigram blocking)"), std::string::npos) << result.out;
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "one.json"));
  EXPECT_EQ(report["count"], 3);
  EXPECT_EQ(report["top_k"], 1);
  EXPECT_EQ(report["trigram_blocking"], true);
}

// LoRA on the encoder: only the adapter's tensors change, and its file on the base extracts
// exactly what the adapted run extracts.
TEST_F(CliExtract, LoraOnTheEncoderLoadsOntoItsBase) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult lora = run("train --quiet --config " + path("extractive.toml") + " --base " + path("run") +
                             " --adapter lora --out " + path("lora") + " train.learning_rate=0.05");
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  EXPECT_NE(lora.out.find("adapter: lora on 2 linear maps"), std::string::npos) << lora.out;  // q_proj, v_proj
  ASSERT_TRUE(fs::exists(dir_ / "lora/adapter.safetensors"));
  const SafetensorsFile adapter(dir_ / "lora/adapter.safetensors");
  for (const TensorEntry& entry : adapter.entries()) EXPECT_NE(entry.name.find("lora_"), std::string::npos) << entry.name;
  EXPECT_EQ(adapter.entries().size(), 4u);  // A and B of each map

  const std::string data = " --data " + path("valid.jsonl") + " --quiet --out ";
  const CliResult adapted = run("extract --model " + path("lora") + data + path("adapted.jsonl"));
  const CliResult on_base =
      run("extract --model " + path("run") + " --adapter " + path("lora/adapter.safetensors") + data + path("base.jsonl"));
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  ASSERT_EQ(on_base.exit_code, 0) << on_base.err;
  EXPECT_EQ(slurp(dir_ / "base.jsonl"), slurp(dir_ / "adapted.jsonl"));
}

// PALs as an adapter: `--adapter pal` builds the encoder with a PAL beside every layer
// (adapter.size, adapter.heads), and its adapter file rebuilds them on the base.
TEST_F(CliExtract, PalAdapterOnTheEncoderLoadsOntoItsBase) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult pal = run("train --quiet --config " + path("extractive.toml") + " --base " + path("run") +
                            " --adapter pal --out " + path("pal-adapter") + " adapter.size=16 adapter.heads=2");
  ASSERT_EQ(pal.exit_code, 0) << pal.err;
  EXPECT_NE(pal.out.find("adapter: pal, built into the model"), std::string::npos) << pal.out;
  EXPECT_NE(pal.out.find("adapter: loads onto " + path("run")), std::string::npos) << pal.out;
  const SafetensorsFile adapter(dir_ / "pal-adapter/adapter.safetensors");
  for (const TensorEntry& entry : adapter.entries()) EXPECT_NE(entry.name.find(".pal."), std::string::npos) << entry.name;

  const std::string data = " --data " + path("valid.jsonl") + " --quiet --out ";
  const CliResult adapted = run("extract --model " + path("pal-adapter") + data + path("pal-adapted.jsonl"));
  const CliResult on_base = run("extract --model " + path("run") + " --adapter " +
                                path("pal-adapter/adapter.safetensors") + data + path("pal-base.jsonl"));
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  ASSERT_EQ(on_base.exit_code, 0) << on_base.err;
  EXPECT_EQ(slurp(dir_ / "pal-base.jsonl"), slurp(dir_ / "pal-adapted.jsonl"));
}

// Seed 003 §4.3.3: PALs with the patterns in their heads train beside a frozen base model.
TEST_F(CliExtract, PalsWithPatternsTrainOnAFrozenBase) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult pal = run("train --quiet --config " + path("extractive.toml") + " --recipe pal-patterns --base " +
                            path("run") + " --out " + path("pal") + " model.pal_size=16 model.pal_heads=4");
  ASSERT_EQ(pal.exit_code, 0) << pal.err;
  EXPECT_NE(pal.out.find("new (not in the base): "), std::string::npos) << pal.out;
  EXPECT_NE(pal.out.find("0 unused"), std::string::npos) << pal.out;
  EXPECT_EQ(pal.out.find("trainable%: 100.0000"), std::string::npos) << pal.out;  // the base is frozen
  // The base's own weights came through unchanged; the PAL's up-projection trained away from 0.
  auto weights = [](const fs::path& run, const char* which) {  // checkpoints/<which> names a step
    std::string step = slurp(run / "checkpoints" / which);
    step.erase(step.find_last_not_of(" \n") + 1);
    return SafetensorsFile(run / "checkpoints" / step / "model.safetensors");
  };
  const SafetensorsFile base = weights(dir_ / "run", "best");  // what --base loads
  const SafetensorsFile tuned = weights(dir_ / "pal", "latest");
  for (const char* name : {"encoder.layers.0.fc1.weight", "encoder.layers.0.self_attn.q_proj.weight"}) {
    const auto a = base.bytes(base.entry(name)), b = tuned.bytes(tuned.entry(name));
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << name;
  }
  const auto up = tuned.bytes(tuned.entry("encoder.layers.0.pal.up.weight"));
  EXPECT_TRUE(std::any_of(up.begin(), up.end(), [](std::byte x) { return x != std::byte{0}; }));
  const std::string config = slurp(tuned.path().parent_path() / "config.json");
  EXPECT_NE(config.find("matching_token"), std::string::npos) << config;  // the PAL heads' patterns
  const CliResult extracted = run("extract --quiet --model " + path("pal") + " --data " + path("valid.jsonl"));
  EXPECT_EQ(extracted.exit_code, 0) << extracted.err;
  // A base of another size is refused, naming the field.
  const CliResult wrong = run("train --quiet --config " + path("extractive.toml") + " --recipe pal --base " +
                              path("run") + " --out " + path("pal_wrong") + " model.d_model=64");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.err.find("d_model"), std::string::npos) << wrong.err;
}

TEST_F(CliExtract, BadInputIsAnErrorThatNamesIt) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  const CliResult zero = run("extract --model " + path("run") + " --data " + path("valid.jsonl") + " --top-k 0");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("--top-k"), std::string::npos) << zero.err;

  const CliResult no_model = run("extract --model " + path("tok") + " --data " + path("valid.jsonl"));
  EXPECT_NE(no_model.exit_code, 0);
  EXPECT_NE(no_model.err.find("not a model"), std::string::npos) << no_model.err;

  std::ofstream(dir_ / "empty.jsonl") << R"({"document": "Some text here.", "summary": ""})" << "\n";
  const CliResult empty = run("extract --model " + path("run") + " --data " + path("empty.jsonl") + " --out " +
                              path("never.jsonl"));
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_NE(empty.err.find("empty.jsonl"), std::string::npos) << empty.err;
  EXPECT_FALSE(fs::exists(dir_ / "never.jsonl"));
}

TEST_F(CliExtract, ExtractiveModelsServeSummariesOfTheirOwnSentences) {
  ASSERT_EQ(trained_.exit_code, 0) << trained_.err;
  std::ofstream(dir_ / "sent_clf.toml")
      << "[model]\narchitecture = \"sent_clf\"\nd_model = 32\nlstm_hidden = 32\nlstm_layers = 1\n"
         "[data]\ntrain = \"" << path("train.jsonl") << "\"\nvalid = \"" << path("valid.jsonl") << "\"\ntokenizer = \""
      << path("tok") << "\"\n[extract]\ntop_k = 1\nmax_sentences = 10\nmax_sentence_tokens = 20\n"
         "[train]\nmax_steps = 4\nwarmup_steps = 1\neval_every = 4\neval_docs = 2\nmax_tokens = 1024\nthreads = 1\n";
  const CliResult sent_clf = run("train --quiet --config " + path("sent_clf.toml") + " --out " + path("sent_clf"));
  ASSERT_EQ(sent_clf.exit_code, 0) << sent_clf.err;

  std::vector<std::string> documents;
  std::istringstream lines(slurp(dir_ / "valid.jsonl"));
  for (std::string line; std::getline(lines, line) && documents.size() < 2;)
    documents.push_back(nlohmann::json::parse(line)["document"]);
  const auto sentences_of = [](const std::string& text) {  // the toy documents' sentences end in ". "
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string sentence;
    while (std::getline(in, sentence, '.')) {
      const std::size_t start = sentence.find_first_not_of(' ');
      if (start != std::string::npos) out.push_back(sentence.substr(start) + ".");
    }
    return out;
  };

  // The encoder picks extract.top_k = 2 sentences, sent_clf its top_k = 1.
  for (const auto& [run_name, picks] : {std::pair<std::string, std::size_t>{"run", 2}, {"sent_clf", 1}}) {
    SCOPED_TRACE(run_name);
    fs::create_directories(dir_ / ("serve-" + run_name));
    test_support::ServerProcess server("--model " + path(run_name) + " --name ext --port 0 --threads 1",
                                       dir_ / ("serve-" + run_name));
    const int port = server.port();
    ASSERT_GT(port, 0) << server.err();
    httplib::Client client("127.0.0.1", port);
    const auto summarized = client.Post("/v1/summarize", nlohmann::json{{"model", "ext"}, {"input", documents}}.dump(),
                                        "application/json");
    ASSERT_TRUE(summarized);
    ASSERT_EQ(summarized->status, 200) << summarized->body;
    const nlohmann::json data = nlohmann::json::parse(summarized->body)["data"];
    ASSERT_EQ(data.size(), documents.size());
    for (std::size_t i = 0; i < documents.size(); ++i) {
      const std::vector<std::string> document = sentences_of(documents[i]);
      std::vector<std::string> picked;
      std::istringstream summary(data[i]["summary"].get<std::string>());
      for (std::string line; std::getline(summary, line);) picked.push_back(line);
      ASSERT_EQ(picked.size(), picks) << data[i];
      std::size_t after = 0;  // each pick is a sentence of the document, in document order
      for (const std::string& sentence : picked) {
        const auto at = std::find(document.begin() + after, document.end(), sentence);
        ASSERT_NE(at, document.end()) << sentence << " in " << documents[i];
        after = static_cast<std::size_t>(at - document.begin()) + 1;
      }
    }
    const auto completion = client.Post("/v1/completions", R"({"model": "ext", "prompt": "x"})", "application/json");
    ASSERT_TRUE(completion);
    EXPECT_EQ(completion->status, 400);
    EXPECT_NE(completion->body.find("/v1/summarize"), std::string::npos) << completion->body;
    const auto empty = client.Post("/v1/summarize", R"({"model": "ext", "input": "   "})", "application/json");
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->status, 400);
    EXPECT_NE(empty->body.find("input[0]"), std::string::npos) << empty->body;
    EXPECT_EQ(server.terminate(), 0) << server.err();
  }
}

}  // namespace
}  // namespace strata
