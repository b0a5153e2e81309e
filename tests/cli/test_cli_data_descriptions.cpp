// Runs the built `strata data descriptions` on the fixture apt lists (tests/fixtures/debian/lists).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/doc/dataset.h"
#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;

const std::string kLists = (fs::path(STRATA_FIXTURES_DIR) / "debian" / "lists").string();

class CliDataDescriptions : public test_support::ScratchTest {
 protected:
  CliDataDescriptions() : ScratchTest("strata_cli_data_descriptions") {}
  std::string path(const std::string& relative) const { return (dir_ / relative).string(); }
};

TEST_F(CliDataDescriptions, BuildsTheCorpusFromAptLists) {
  const CliResult r = run("data descriptions --no-fetch --lists " + kLists + " --out " + path("corpus"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("descriptions: 5 documents of 3 source packages from 9 packages"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("compression"), std::string::npos) << r.out;  // the table's header
  EXPECT_NE(r.err.find("_Translation-en"), std::string::npos) << "the indexes read, on stderr: " << r.err;

  // The last line is the stats, as stats.json holds them.
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  const nlohmann::json printed = nlohmann::json::parse(last);
  EXPECT_EQ(printed, nlohmann::json::parse(test_support::slurp(dir_ / "corpus" / "stats.json")));
  EXPECT_EQ(printed["skipped"]["duplicate_description"], 1);
  EXPECT_NE(printed["origin"].get<std::string>().find(kLists), std::string::npos);

  std::set<std::string> ids;
  for (const char* split : {"train", "validation", "test"}) {
    DatasetReader reader(dir_ / "corpus" / (std::string(split) + ".jsonl"));
    Document document;
    while (reader.next(document)) {
      ids.insert(document.id);
      EXPECT_FALSE(document.summary.empty()) << document.id;
    }
  }
  EXPECT_EQ(ids, (std::set<std::string>{"barcode-tool", "foo-doc", "gamma", "libfoo-dev", "libfoo1"}));

  // Stricter limits through the flags; --quiet leaves stderr empty.
  const CliResult strict = run("data descriptions --quiet --no-fetch --lists " + kLists +
                               " --min-document-words 30 --min-summary-words 4 --out " + path("strict"));
  ASSERT_EQ(strict.exit_code, 0) << strict.err;
  EXPECT_TRUE(strict.err.empty()) << strict.err;
  EXPECT_NE(strict.out.find("descriptions: 1 documents"), std::string::npos) << strict.out;  // barcode-tool
}

TEST_F(CliDataDescriptions, BadInputNamesTheFileLineAndField) {
  write("Packages", "Package: a\nSection: utils\n\nSection: misc\n");
  write("Translation-en", "Package: a\nDescription-md5: m\nDescription-en: short\n long\n");
  const CliResult bad = run("data descriptions --packages " + path("Packages") + " --translation " +
                            path("Translation-en") + " --out " + path("out"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("Packages:4: field 'Package': missing"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "train.jsonl"));

  const CliResult half = run("data descriptions --packages " + path("Packages") + " --out " + path("out"));
  EXPECT_EQ(half.exit_code, 1);
  EXPECT_NE(half.err.find("give both --packages and --translation"), std::string::npos) << half.err;

  const CliResult none = run("data descriptions --no-fetch --lists " + path("nowhere") + " --out " + path("out"));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no Packages index"), std::string::npos) << none.err;

  const CliResult help = run("data descriptions --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("SOURCE package"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace strata
