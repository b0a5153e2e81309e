// GLUE-style TSV files read into the multi-task format, on hand-made fixtures.
#include "strata/data/glue_tsv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class GlueTsv : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_glue_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

TEST_F(GlueTsv, ReadsColumnsByNameOrIndex) {
  GlueTsvOptions sst{"sst2", "sentence", "", "label"};
  const auto rows = read_glue_tsv(write("sst/train.tsv", "sentence\tlabel\nit 's a charming journey \t1\r\nflat\t0\n"), sst);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["id"], "sst2-2");
  EXPECT_EQ(rows[0]["task"], "sst2");
  EXPECT_EQ(rows[0]["text"], "it 's a charming journey ");
  EXPECT_EQ(rows[0]["label"], "1");
  EXPECT_FALSE(rows[0].contains("text_b"));

  GlueTsvOptions cola{"cola", "3", "", "1", /*header=*/false};
  const auto no_header = read_glue_tsv(write("cola.tsv", "gj04\t1\t\tOur friends won't buy this analysis.\n"), cola);
  ASSERT_EQ(no_header.size(), 1u);
  EXPECT_EQ(no_header[0]["text"], "Our friends won't buy this analysis.");
  EXPECT_EQ(no_header[0]["label"], "1");

  GlueTsvOptions sts{"stsb", "sentence1", "sentence2", "score", true, /*regression=*/true};
  const auto pairs = read_glue_tsv(write("sts.tsv", "index\tsentence1\tsentence2\tscore\n0\tA man.\tA person.\t3.8\n"), sts);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0]["text_b"], "A person.");
  EXPECT_DOUBLE_EQ(pairs[0]["label"].get<double>(), 3.8);
}

TEST_F(GlueTsv, BadRowsNameFileLineAndColumn) {
  GlueTsvOptions sts{"stsb", "sentence1", "sentence2", "score", true, true};
  try {
    (void)read_glue_tsv(write("bad.tsv", "sentence1\tsentence2\tscore\na\tb\t1.5\nc\td\n"), sts);
    FAIL() << "a short row was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tsv:3: field 'score': missing"), std::string::npos) << e.what();
  }
  try {
    (void)read_glue_tsv(write("nan.tsv", "sentence1\tsentence2\tscore\na\tb\thigh\n"), sts);
    FAIL() << "a non-numeric regression label was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nan.tsv:2: field 'score': 'high' is not a number"), std::string::npos)
        << e.what();
  }
  GlueTsvOptions unknown{"x", "sentence", "", "gold"};
  EXPECT_THROW((void)read_glue_tsv(write("h.tsv", "sentence\tlabel\na\t1\n"), unknown), Error);
}

TEST_F(GlueTsv, ImportsATaskDirectoryBesideTheOtherTasks) {
  write("out/tasks.json", "{\"section\": {\"kind\": \"classification\"}}\n");
  write("SST-2/train.tsv", "sentence\tlabel\ngood\t1\nbad\t0\nfine\t1\n");
  write("SST-2/dev.tsv", "sentence\tlabel\nok\t1\n");
  write("SST-2/test.tsv", "index\tsentence\n0\tunseen\n");  // GLUE's test files carry no labels
  const auto entry = import_glue_task(dir_ / "SST-2", {"sst2", "sentence", "", "label"}, dir_ / "out");
  EXPECT_EQ(entry["labels"], (nlohmann::ordered_json{"0", "1"}));
  EXPECT_EQ(entry["examples"]["train"], 3);
  EXPECT_EQ(entry["examples"]["validation"], 1);
  EXPECT_EQ(entry["examples"]["test"], 1);
  const auto suite = nlohmann::json::parse(read_file(dir_ / "out" / "tasks.json"));
  EXPECT_TRUE(suite.contains("section"));  // kept
  EXPECT_TRUE(suite.contains("sst2"));
  const std::string test = read_file(dir_ / "out" / "tasks" / "sst2" / "test.jsonl");
  EXPECT_EQ(nlohmann::json::parse(test)["text"], "unseen");
  EXPECT_FALSE(nlohmann::json::parse(test).contains("label"));
  EXPECT_THROW(import_glue_task(dir_ / "nowhere", {"x", "sentence", "", "label"}, dir_ / "out"), Error);
}

}  // namespace
}  // namespace strata
