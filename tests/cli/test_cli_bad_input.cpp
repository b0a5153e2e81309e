// Bad input through the CLI: damaged text is repaired and reported, broken input is an
// error naming the file, and no output file is left half-written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::run_strata;

class CliBadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_cli_bad_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(CliBadInput, InvalidUtf8InADocumentIsReplacedAndReported) {
  const fs::path text = write("bad.txt", "caf\xE9 and \xFF more. A second sentence.\n");
  const auto r = run_strata("doc show " + text.string(), dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("bad.txt: 2 invalid UTF-8 bytes replaced by U+FFFD"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("1 paragraph, 2 sentences"), std::string::npos) << r.out;
}

TEST_F(CliBadInput, InvalidUtf8InJsonlIsReplacedAndReported) {
  const fs::path pairs =
      write("pairs.jsonl", "{\"prediction\": \"caf\xE9 ok\", \"reference\": \"cafe ok\"}\n");
  const auto r = run_strata("eval rouge --types rouge1 --json --pairs " + pairs.string(), dir_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("pairs.jsonl: 1 invalid UTF-8 byte replaced by U+FFFD"), std::string::npos) << r.err;
}

TEST_F(CliBadInput, MalformedDatasetLeavesTheOldOutputInPlace) {
  const fs::path out = write("lead.jsonl", "previous good output\n");
  const fs::path data = write("data.jsonl",
                              "{\"document\": \"One. Two.\", \"summary\": \"One.\"}\n"
                              "{\"document\": 7, \"summary\": \"x\"}\n");
  const auto r = run_strata("baseline lead --data " + data.string() + " --out " + out.string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("data.jsonl:2: field 'document'"), std::string::npos) << r.err;
  EXPECT_EQ(test_support::slurp(out), "previous good output\n");
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("lead.jsonl.tmp"), std::string::npos);
}

TEST_F(CliBadInput, MissingFilesAndUnknownOptionsFailClearly) {
  auto r = run_strata("doc show " + (dir_ / "absent.md").string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("absent.md"), std::string::npos) << r.err;
  r = run_strata("data stats --data " + dir_.string(), dir_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("train.jsonl: missing"), std::string::npos) << r.err;
  r = run_strata("eval rouge --pairs x.jsonl --frobnicate", dir_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST_F(CliBadInput, LeadBaselineOnEmptyDocumentsGivesEmptyPredictions) {
  const fs::path data = write("data.jsonl", "{\"document\": \"\", \"summary\": \"s\"}\n");
  const fs::path out = dir_ / "lead.jsonl";
  const auto r = run_strata("baseline lead --data " + data.string() + " --out " + out.string(), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The document's id (here its FILE:LINE, having none) keys the pair for `lm summarize --extracts`.
  EXPECT_EQ(test_support::slurp(out), "{\"id\":\"" + data.string() +
                                          ":1\",\"prediction\":\"\",\"reference\":\"s\",\"source\":\"\"}\n");
}

}  // namespace
}  // namespace strata
