// `strata tokenizer train | encode | decode` run as a user would: train on a small generated
// corpus, encode, decode back, and give the wrong kind of file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliTokenizer : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_tokenizer_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Made-up words of two or three syllables: enough distinct words for unigram to fill a
    // 400-piece vocabulary. Every fifth line holds a section marker.
    const char* const syllables[] = {"sum", "ma", "ry", "doc", "u", "ment", "head", "ing",
                                     "the", "in", "a",  "sec", "tion", "to", "ken", "lay",
                                     "er",  "mo", "del", "at", "ten", "par", "gra", "ph"};
    std::uint32_t state = 1;
    const auto next = [&] { return (state = state * 1664525u + 1013904223u) >> 8; };
    std::ofstream corpus(dir_ / "corpus.txt");
    for (int i = 0; i < 3000; ++i) {
      for (int w = 0; w < 8; ++w) {
        corpus << (w ? " " : "");
        for (std::uint32_t k = 1 + next() % 3; k > 0; --k) corpus << syllables[next() % 24];
      }
      corpus << (i % 5 == 0 ? " [SEC] end.\n" : ".\n");
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }


  static Result run(const std::string& args) { return test_support::run_strata(args, dir_); }

  static fs::path dir_;
};
fs::path CliTokenizer::dir_;

TEST_F(CliTokenizer, TrainEncodeDecodeRoundTrip) {
  const fs::path model = dir_ / "unigram";
  const Result train = run("tokenizer train --input " + (dir_ / "corpus.txt").string() + " --out " +
                           model.string() + " --vocab-size 400 --type unigram");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_NE(train.out.find("vocab size: 400"), std::string::npos) << train.out;
  const std::string stats_line = train.out.substr(train.out.find('\n') + 1);
  const nlohmann::json stats = nlohmann::json::parse(stats_line);
  EXPECT_EQ(stats["sentences"], 3000);
  EXPECT_GT(stats["bytes_per_token"].get<double>(), 1.0);
  EXPECT_TRUE(fs::is_regular_file(model / "tokenizer.model"));
  EXPECT_TRUE(fs::is_regular_file(model / "strata-tokenizer.json"));

  const std::string text = "the summary in a document [SEC] heading";
  const Result encoded =
      run("tokenizer encode --tokenizer " + model.string() + " --text '" + text + "'");
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  const std::string ids = encoded.out.substr(0, encoded.out.find('\n'));
  EXPECT_NE((" " + ids + " ").find(" 6 "), std::string::npos) << ids;  // [SEC] kept whole
  const Result decoded =
      run("tokenizer decode --tokenizer " + model.string() + " --ids '" + ids + "'");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, text + "\n");

  const Result pieces =
      run("tokenizer encode --tokenizer " + model.string() + " --text heading --pieces --json");
  ASSERT_EQ(pieces.exit_code, 0) << pieces.err;
  const nlohmann::json line = nlohmann::json::parse(pieces.out);
  EXPECT_EQ(line["ids"].size(), line["pieces"].size());
}

TEST_F(CliTokenizer, ByteBpeEncodesFilesLineByLine) {
  const fs::path model = dir_ / "bbpe";
  const Result train = run("tokenizer train --input " + (dir_ / "corpus.txt").string() + " --out " +
                           model.string() + " --vocab-size 500 --type byte-bpe");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_TRUE(fs::is_regular_file(model / "tokenizer.json"));
  std::ofstream(dir_ / "lines.txt") << "first  line, naïve café\n\nthird [L↑] line \xFF\n";
  const Result encoded = run("tokenizer encode --tokenizer " + model.string() + " --input " +
                             (dir_ / "lines.txt").string() + " --json");
  ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
  std::ofstream(dir_ / "ids.jsonl") << encoded.out;
  const Result decoded = run("tokenizer decode --tokenizer " + (model / "tokenizer.json").string() +
                             " --input " + (dir_ / "ids.jsonl").string());
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_EQ(decoded.out, slurp(dir_ / "lines.txt"));
}

TEST_F(CliTokenizer, TrainsOnJsonlDatasetFields) {
  {
    std::ofstream data(dir_ / "news.jsonl");
    for (int i = 0; i < 50; ++i)
      data << nlohmann::json{{"article", "Article " + std::to_string(i) + " reports the news."},
                             {"highlights", "Highlight " + std::to_string(i) + "."}}
                  .dump()
           << "\n";
  }
  const auto sentences = [&](const std::string& field) {
    const Result train = run("tokenizer train --input " + (dir_ / "news.jsonl").string() +
                             " --jsonl-field " + field + " --out " + (dir_ / "news").string() +
                             " --vocab-size 320 --type byte-bpe");
    EXPECT_EQ(train.exit_code, 0) << train.err;
    return nlohmann::json::parse(train.out.substr(train.out.find('\n') + 1))["sentences"];
  };
  EXPECT_EQ(sentences("text"), 50);
  EXPECT_EQ(sentences("summary"), 50);
  EXPECT_EQ(sentences("all"), 100);
}

TEST_F(CliTokenizer, WrongKindOfFileIsAClearError) {
  std::ofstream(dir_ / "data.jsonl") << "{\"article\": \"a\", \"highlights\": \"b\"}\n{}\n";
  const Result result =
      run("tokenizer encode --tokenizer " + (dir_ / "data.jsonl").string() + " --text hello");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("data.jsonl"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("looks like JSON Lines"), std::string::npos) << result.err;
}

TEST_F(CliTokenizer, BadIdsAndMissingInputsAreErrors) {
  const Result no_text = run("tokenizer encode --tokenizer " + (dir_ / "corpus.txt").string());
  EXPECT_NE(no_text.exit_code, 0);
  EXPECT_NE(no_text.err.find("--text or --input"), std::string::npos) << no_text.err;
  const Result train = run("tokenizer train --input " + (dir_ / "corpus.txt").string() + " --out " +
                           (dir_ / "small").string() + " --vocab-size 300 --type byte-bpe");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const Result bad =
      run("tokenizer decode --tokenizer " + (dir_ / "small").string() + " --ids '1 2 x3'");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("'x3' is not a token id"), std::string::npos) << bad.err;
  const Result out_of_range =
      run("tokenizer decode --tokenizer " + (dir_ / "small").string() + " --ids '1 99999'");
  EXPECT_NE(out_of_range.exit_code, 0);
  EXPECT_NE(out_of_range.err.find("99999"), std::string::npos) << out_of_range.err;
}

}  // namespace
}  // namespace strata
