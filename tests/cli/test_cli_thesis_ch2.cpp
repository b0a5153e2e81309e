// Thesis ch. 2 end to end on a small generated dataset, as a user runs it: a tokenizer with
// the TLM markers, Sent-PTR trained and extracting, a TLM trained on gold extracts and
// summarising from the extractor's (G,M), and the errors on the way.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/strings.h"
#include "support/cli.h"
#include "support/toy_words.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

class CliThesisCh2 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_ch2_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    test_support::ToyWords toy(7);
    // Five sentences per document; the summary rewords the third, so the oracle points there.
    for (const char* split : {"train", "valid"}) {
      std::ofstream out(dir_ / (std::string(split) + ".jsonl"));
      for (int i = 0; i < (split[0] == 't' ? 30 : 5); ++i) {
        std::string body, summary;
        for (int s = 0; s < 5; ++s) {
          const std::string sentence = toy.words(5);
          body += std::string(s ? " " : "") + sentence + ".";
          if (s == 2) summary = sentence;
        }
        out << nlohmann::json{{"id", std::string(split) + std::to_string(i)}, {"document", body}, {"summary", summary}}
                   .dump()
            << "\n";
      }
    }
    tokenizer_ = run("tokenizer train --input " + path("train.jsonl") + " --jsonl-field all --out " + path("tok") +
                     " --vocab-size 300 --type byte-bpe --special '[INTRO],[EXTRACT],[SUMMARY],[REST]'");
    const std::string data = "[data]\ntrain = \"" + path("train.jsonl") + "\"\nvalid = \"" + path("valid.jsonl") +
                             "\"\ntokenizer = \"" + path("tok") + "\"\n";
    std::ofstream(dir_ / "ptr.toml") << "[model]\narchitecture = \"sent_ptr\"\nd_model = 16\nlstm_hidden = 8\n" << data
                                     << "[extract]\nmax_steps = 3\n"
                                        "[train]\nmax_steps = 6\nwarmup_steps = 2\neval_every = 3\neval_docs = 3\n"
                                        "max_tokens = 512\nthreads = 1\nlearning_rate = 0.001\n";
    std::ofstream(dir_ / "tlm.toml")
        << "[model]\narchitecture = \"causal_lm\"\nd_model = 32\nheads = 2\nd_ff = 64\ndecoder_layers = 1\n"
           "max_positions = 128\npre_norm = true\n"
        << data
        << "task = \"tlm\"\nblock_size = 96\n"
           "[tlm]\nintro_tokens = 40\nextract_tokens = 20\nsummary_tokens = 16\n"
           "[train]\nmax_steps = 4\nwarmup_steps = 1\neval_every = 4\nmax_tokens = 512\nthreads = 1\n"
           "[decode]\ndo_sample = true\nbeam_size = 1\ntop_k = 30\ntemperature = 0.7\n";
    if (tokenizer_.exit_code != 0) return;
    pointer_ = run("train --quiet --config " + path("ptr.toml") + " --out " + path("ptr"));
    tlm_ = run("train --quiet --config " + path("tlm.toml") + " --out " + path("tlm"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult tokenizer_, pointer_, tlm_;
};
fs::path CliThesisCh2::dir_;
CliResult CliThesisCh2::tokenizer_, CliThesisCh2::pointer_, CliThesisCh2::tlm_;

std::vector<nlohmann::json> lines_of(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(slurp(file));
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST_F(CliThesisCh2, SentPtrTrainsAndExtractsBesideLeadAndTheOracle) {
  ASSERT_EQ(tokenizer_.exit_code, 0) << tokenizer_.err;
  ASSERT_EQ(pointer_.exit_code, 0) << pointer_.err;
  EXPECT_NE(slurp(dir_ / "ptr/metrics.jsonl").find("\"rouge1\""), std::string::npos);
  const CliResult result = run("extract --quiet --model " + path("ptr") + " --data " + path("valid.jsonl") +
                               " --out " + path("extracts.jsonl") + " --json " + path("ptr.json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* row : {"model (beam 4, <= 3 picks)", "lead-", "oracle (2 per summary sentence)"})
    EXPECT_NE(result.out.find(row), std::string::npos) << row << "\n" << result.out;
  const nlohmann::json report = nlohmann::json::parse(slurp(dir_ / "ptr.json"));
  EXPECT_EQ(report["architecture"], "sent_ptr");
  EXPECT_EQ(report["count"], 5);
  const std::vector<nlohmann::json> lines = lines_of(dir_ / "extracts.jsonl");
  ASSERT_EQ(lines.size(), 5u);
  for (const nlohmann::json& line : lines) {
    const auto picks = line["selected"].get<std::vector<std::size_t>>();
    EXPECT_GE(picks.size(), 1u);
    EXPECT_LE(picks.size(), 3u);
    for (std::size_t i : picks) EXPECT_LT(i, 5u);
  }
  EXPECT_EQ(lines[0]["id"], "valid0");
  // The oracle of each document holds the sentence its summary rewords: ROUGE-1 F of 1 is out
  // of reach (two sentences), but it beats any other pair.
  EXPECT_GT(report["systems"]["oracle"]["scores"]["rouge1"]["fmeasure"]["mean"].get<double>(), 0.6);
}

TEST_F(CliThesisCh2, TheTlmSummarisesFromTheExtractorsExtracts) {
  ASSERT_EQ(tlm_.exit_code, 0) << tlm_.err;
  ASSERT_EQ(pointer_.exit_code, 0) << pointer_.err;
  ASSERT_EQ(run("extract --quiet --model " + path("ptr") + " --data " + path("valid.jsonl") + " --out " +
                path("m.jsonl")).exit_code, 0);
  const std::string summarize = "lm summarize --quiet --model " + path("tlm") + " --data " + path("valid.jsonl");
  const CliResult gm = run(summarize + " --extracts " + path("m.jsonl") + " --seed 3 --out " + path("gm.jsonl"));
  ASSERT_EQ(gm.exit_code, 0) << gm.err;
  const std::vector<nlohmann::json> lines = lines_of(dir_ / "gm.jsonl");
  ASSERT_EQ(lines.size(), 5u);
  const std::vector<nlohmann::json> extracts = lines_of(dir_ / "m.jsonl");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    for (const char* field : {"id", "prediction", "reference", "source", "extract", "context"})
      EXPECT_TRUE(lines[i].contains(field)) << field;
    EXPECT_EQ(lines[i]["id"], extracts[i]["id"]);
    EXPECT_NE(lines[i]["extract"].get<std::string>(), "");
  }
  // The same seed samples the same summaries; pairs go straight to the metrics.
  ASSERT_EQ(run(summarize + " --extracts " + path("m.jsonl") + " --seed 3 --out " + path("again.jsonl")).exit_code, 0);
  EXPECT_EQ(slurp(dir_ / "gm.jsonl"), slurp(dir_ / "again.jsonl"));
  const CliResult rouge = run("eval rouge --pairs " + path("gm.jsonl"));
  EXPECT_EQ(rouge.exit_code, 0) << rouge.err;
  // Without extracts the prompt has no extract block.
  ASSERT_EQ(run(summarize + " --extracts none --out " + path("none.jsonl")).exit_code, 0);
  EXPECT_EQ(lines_of(dir_ / "none.jsonl")[0]["extract"], "");
}

TEST_F(CliThesisCh2, ASparseTlmReadsItsPartsFromTheMarkersAndSummarises) {
  ASSERT_EQ(tokenizer_.exit_code, 0) << tokenizer_.err;
  const CliResult trained =
      run("train --quiet --config " + path("tlm.toml") + " --out " + path("sparse") +
          " model.decoder_attention='{\"heads\": [{\"mask\": \"causal & (window(8,0) | query_segment(2))\"}]}'");
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  // The model knows the tokenizer's four markers, so decoding reads the parts as training did.
  const fs::path checkpoints = dir_ / "sparse/checkpoints";
  const nlohmann::json config =
      nlohmann::json::parse(slurp(checkpoints / std::string(trim(slurp(checkpoints / "latest"))) / "config.json"));
  std::vector<std::string> markers;
  std::istringstream list(config["model"]["segment_markers"].get<std::string>());
  for (std::string id; std::getline(list, id, ',');) markers.push_back(id);
  EXPECT_EQ(markers.size(), 4u) << config["model"]["segment_markers"];
  const CliResult encoded = run("tokenizer encode --tokenizer " + path("tok") + " --text '[SUMMARY]' --json");
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  ASSERT_EQ(markers.size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(encoded.out)["ids"], nlohmann::json::array({std::stoi(markers[2])})) << encoded.out;
  const CliResult summaries = run("lm summarize --quiet --model " + path("sparse") + " --data " + path("valid.jsonl") +
                                  " --extracts gold --seed 2 --out " + path("sparse.jsonl"));
  ASSERT_EQ(summaries.exit_code, 0) << summaries.err;
  EXPECT_EQ(lines_of(dir_ / "sparse.jsonl").size(), 5u);
}

TEST_F(CliThesisCh2, ErrorsNameWhatIsWrong) {
  ASSERT_EQ(tlm_.exit_code, 0) << tlm_.err;
  ASSERT_EQ(pointer_.exit_code, 0) << pointer_.err;
  std::ofstream(dir_ / "partial.jsonl") << "{\"id\": \"valid0\", \"prediction\": \"a\"}\n";
  const CliResult missing = run("lm summarize --quiet --model " + path("tlm") + " --data " + path("valid.jsonl") +
                                " --extracts " + path("partial.jsonl") + " --out " + path("x.jsonl"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("no extract for document 'valid1'"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl"));
  const CliResult not_tlm = run("lm summarize --quiet --model " + path("ptr") + " --data " + path("valid.jsonl") +
                                " --extracts none --out " + path("y.jsonl"));
  EXPECT_NE(not_tlm.exit_code, 0);
  EXPECT_NE(not_tlm.err.find("data.task = tlm"), std::string::npos) << not_tlm.err;
  // A tokenizer without the markers cannot format the sequences, and says how to get one.
  ASSERT_EQ(run("tokenizer train --input " + path("train.jsonl") + " --out " + path("plain") +
                " --vocab-size 300 --type byte-bpe").exit_code, 0);
  const CliResult unmarked = run("train --quiet --config " + path("tlm.toml") + " --out " + path("tlm2") +
                                 " data.tokenizer=" + path("plain"));
  EXPECT_NE(unmarked.exit_code, 0);
  EXPECT_NE(unmarked.err.find("--special"), std::string::npos) << unmarked.err;
  // Budgets that do not fit a window are refused before any training.
  const CliResult tight = run("train --quiet --config " + path("tlm.toml") + " --out " + path("tlm3") +
                              " data.block_size=64");
  EXPECT_NE(tight.exit_code, 0);
  EXPECT_NE(tight.err.find("more than a window of 64"), std::string::npos) << tight.err;
}

}  // namespace
}  // namespace strata
