#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/dataset.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::string page(const std::string& name, const std::string& description, int body_sentences) {
  std::string roff = ".TH " + name + " 1\n.SH NAME\n" + name + " \\- " + description + "\n";
  roff += ".SH SYNOPSIS\n.B " + name + "\n[\\fIOPTION\\fR]...\n.SH DESCRIPTION\n";
  for (int i = 0; i < body_sentences; ++i)
    roff += "The tool " + name + " does thing number " + std::to_string(i) + " for you.\n";
  roff += ".SS Details\nMore words here about " + name + ".\n";
  return roff;
}

class ManpageCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("strata_corpus_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "man1");
    fs::create_directories(root_ / "man3");
    for (int i = 0; i < 40; ++i) write("man1/tool" + std::to_string(i) + ".1", page("tool" + std::to_string(i), "do thing " + std::to_string(i) + " well", 12));
    write("man1/alias.1", ".so man1/tool1.1\n");
    write("man1/copy.1", page("tool2", "do thing 2 well", 12));  // same body as tool2.1
    write("man1/noname.1", ".TH NONAME 1\n.SH DESCRIPTION\nNo name section here at all.\n");
    write("man3/short.3", page("short", "too short a page", 1));
    fs::create_symlink("tool3.1", root_ / "man1" / "link.1");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }
  fs::path root_;
};

TEST_F(ManpageCorpusTest, KeepsGoodPagesAndCountsEverySkip) {
  ManpageCorpusOptions options;
  options.man_root = root_;
  options.quiet = true;
  options.validation_percent = 20;
  options.test_percent = 20;
  const fs::path out = root_ / "out";
  const nlohmann::json stats = build_manpage_corpus(options, out);

  EXPECT_EQ(stats["pages_found"], 45);
  EXPECT_EQ(stats["skipped"]["alias"], 2);  // the .so page and the symlink
  EXPECT_EQ(stats["skipped"]["duplicate"], 1);
  EXPECT_EQ(stats["skipped"]["no_name"], 1);
  EXPECT_EQ(stats["skipped"]["short_body"], 1);
  EXPECT_EQ(stats["all"]["documents"], 40);

  std::size_t total = 0;
  for (const char* split : {"train", "validation", "test"}) {
    DatasetReader reader(out / (std::string(split) + ".jsonl"));
    Document document;
    while (reader.next(document)) {
      ++total;
      // The split follows the name's hash, the target is the NAME description, and the
      // NAME section itself is not part of the input.
      const std::string name = document.id.substr(0, document.id.find('('));
      EXPECT_EQ(split_of(name, 20, 20), split);
      EXPECT_EQ(document.summary, "do thing " + name.substr(4) + " well");
      ASSERT_FALSE(document.root.children.empty());
      EXPECT_EQ(document.root.children.front().heading, "SYNOPSIS");
      EXPECT_EQ(document.text.find(" \\- "), std::string::npos);
      EXPECT_EQ(document.root.children.back().children.front().heading, "Details");
    }
  }
  EXPECT_EQ(total, 40u);
  EXPECT_EQ(stats["all"]["sections_by_depth"]["1"], 80);  // SYNOPSIS + DESCRIPTION each
  EXPECT_EQ(stats["all"]["sections_by_depth"]["2"], 40);
  EXPECT_TRUE(stats["all"]["input_tokens"].is_null());
  EXPECT_TRUE(fs::exists(out / "stats.json"));
}

TEST_F(ManpageCorpusTest, ExcludesPagesByNameGlob) {
  ManpageCorpusOptions options;
  options.man_root = root_;
  options.quiet = true;
  options.exclude = {"tool1*", "tool7"};
  const nlohmann::json stats = build_manpage_corpus(options, root_ / "out");
  EXPECT_EQ(stats["skipped"]["excluded"], 12);  // tool1, tool10..tool19, tool7
  EXPECT_EQ(stats["all"]["documents"], 28);
}

TEST_F(ManpageCorpusTest, PagesSharingATitleGetIdsThatNameTheirFiles) {
  write("man1/tc-cbq.1", page("CBQ", "class-based queueing", 12));
  write("man1/tc-cbq-details.1", page("CBQ", "class-based queueing", 13));
  ManpageCorpusOptions options;
  options.man_root = root_;
  options.quiet = true;
  build_manpage_corpus(options, root_ / "out");
  std::set<std::string> ids;
  std::size_t documents = 0;
  for (const char* split : {"train", "validation", "test"}) {
    DatasetReader reader(root_ / "out" / (std::string(split) + ".jsonl"));
    Document document;
    while (reader.next(document)) {
      ++documents;
      ids.insert(document.id);
    }
  }
  EXPECT_EQ(documents, 42u);
  EXPECT_EQ(ids.size(), documents);
  EXPECT_TRUE(ids.contains("CBQ(1)[man1/tc-cbq.1]"));
  EXPECT_TRUE(ids.contains("CBQ(1)[man1/tc-cbq-details.1]"));
  EXPECT_TRUE(ids.contains("tool5(1)"));  // a title only one page has stays as it was
}

TEST_F(ManpageCorpusTest, OutputIsDeterministic) {
  ManpageCorpusOptions options;
  options.man_root = root_;
  options.quiet = true;
  build_manpage_corpus(options, root_ / "a");
  build_manpage_corpus(options, root_ / "b");
  for (const char* file : {"train.jsonl", "validation.jsonl", "test.jsonl", "stats.json"})
    EXPECT_EQ(read_file(root_ / "a" / file), read_file(root_ / "b" / file)) << file;
}

TEST_F(ManpageCorpusTest, MissingRootIsAClearError) {
  ManpageCorpusOptions options;
  options.man_root = root_ / "nowhere";
  options.quiet = true;
  try {
    build_manpage_corpus(options, root_ / "out");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nowhere"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(root_ / "out" / "train.jsonl"));
}

TEST(SplitOf, IsAStableFunctionOfTheName) {
  EXPECT_EQ(split_of("ls", 5, 5), split_of("ls", 5, 5));
  std::map<std::string, int> counts;
  for (int i = 0; i < 10000; ++i) ++counts[split_of("page" + std::to_string(i), 5, 5)];
  EXPECT_NEAR(counts["test"], 500, 100);
  EXPECT_NEAR(counts["validation"], 500, 100);
  EXPECT_NEAR(counts["train"], 9000, 150);
}

}  // namespace
}  // namespace strata
