// Runs the built `strata data code|markup|books` on trees made in a scratch directory.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/doc/dataset.h"
#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;

// Every document the corpus in `dir` holds, id → text, read as the language-model data path
// reads it.
std::map<std::string, std::string> read_back(const fs::path& dir) {
  std::map<std::string, std::string> texts;
  for (const char* split : {"train", "validation", "test"}) {
    DatasetReader reader(dir / (std::string(split) + ".jsonl"));
    Document document;
    while (reader.next(document)) texts[document.id] = document.text;
  }
  return texts;
}

class CliDataCorpora : public test_support::ScratchTest {
 protected:
  CliDataCorpora() : ScratchTest("strata_cli_data_corpora") {}

  fs::path put(const std::string& relative, const std::string& text) {
    fs::create_directories((dir_ / relative).parent_path());
    return write(relative, text);
  }
  void put_gz(const std::string& relative, const std::string& text) {
    fs::create_directories((dir_ / relative).parent_path());
    gzFile file = gzopen((dir_ / relative).c_str(), "wb");
    gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
    gzclose(file);
  }
  nlohmann::json stats(const std::string& out) {
    return nlohmann::json::parse(test_support::slurp(dir_ / out / "stats.json"));
  }
  std::string path(const std::string& relative) const { return (dir_ / relative).string(); }
};

TEST_F(CliDataCorpora, CodeKeepsIndentationAndPrintsASummary) {
  const std::string source = "int main() {\n    return 0;\n}\n";
  put("include/app/main.c", source);
  put("include/app/data.bin", std::string("\0\1", 2));
  put("include/top.h", "#pragma once\n");
  const CliResult r = run("data code --root " + path("include") + " --out " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("code: 2 documents"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.err.find("code"), std::string::npos) << "progress on stderr: " << r.err;
  const std::map<std::string, std::string> texts = read_back(dir_ / "out");
  EXPECT_EQ(texts.at("app"), "==> app/main.c <==\n" + source);
  EXPECT_EQ(texts.at("top.h"), "==> top.h <==\n#pragma once\n");
  const nlohmann::json s = stats("out");
  EXPECT_EQ(s["command"], "code");
  EXPECT_EQ(s["root"], path("include"));
  EXPECT_EQ(s["skipped"]["binary"], 1);
}

TEST_F(CliDataCorpora, MarkupKeepsTheRawRoff) {
  const std::string page = ".TH LS 1\n.SH NAME\nls \\- list\n.nf\n  indented\n.fi\n";
  put_gz("man/man1/ls.1.gz", page);
  put("man/man1/dir.1", ".so man1/ls.1\n");
  const CliResult r = run("data markup --quiet --root " + path("man") + " --out " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(read_back(dir_ / "out"), (std::map<std::string, std::string>{{"man1/ls.1", page}}));
  EXPECT_EQ(stats("out")["skipped"]["redirect"], 1);
}

TEST_F(CliDataCorpora, BooksFromAPackageList) {
  put_gz("sys/usr/share/man/man1/tool.1.gz",
         ".TH TOOL 1\n.SH NAME\ntool \\- do things\n.SH DESCRIPTION\nIt does things.\n");
  put("sys/usr/share/doc/tool/README", "Read me.\n");
  put("info/tool.list", "/usr/share/man/man1/tool.1.gz\n/usr/share/doc/tool/README\n");
  const CliResult r = run("data books --quiet --min-bytes 10 --max-documents 5 --root " + path("sys") +
                          " --dpkg-info " + path("info") + " --out " + path("out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_back(dir_ / "out").at("tool");
  EXPECT_NE(text.find("DESCRIPTION\n\nIt does things.\n\nRead me.\n"), std::string::npos) << text;
  EXPECT_EQ(stats("out")["min_bytes"], 10);
}

TEST_F(CliDataCorpora, UnreadableInputFailsNamingTheFile) {
  put("man/man1/bad.1.gz", std::string("\x1f\x8b\x08\x00garbage", 12));
  const CliResult bad = run("data markup --root " + path("man") + " --out " + path("out"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.1.gz"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "train.jsonl"));

  const CliResult missing = run("data code --root " + path("nowhere") + " --out " + path("out"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("nowhere"), std::string::npos) << missing.err;

  const CliResult no_out = run("data books");
  EXPECT_NE(no_out.exit_code, 0);
  EXPECT_NE(no_out.err.find("--out"), std::string::npos) << no_out.err;
}

TEST_F(CliDataCorpora, DebianBuildsTheTaskSuiteFromGivenIndexesAndNamesBadStanzas) {
  std::string packages, translation;
  for (int i = 0; i < 60; ++i) {
    const std::string n = std::to_string(i);
    packages += "Package: p" + n + "\nSource: s" + n + " (1.0)\nSection: " + (i % 2 ? "utils" : "main/libs") +
                "\nPriority: optional\nTag: role::program, use::u" + std::to_string(i % 3) +
                "\nDescription-md5: m" + n + "\n\n";
    translation += "Package: p" + n + "\nDescription-md5: m" + n + "\nDescription-en: tool " + n +
                   "\n This tool number " + n + " reads files and writes reports.\n .\n It is small.\n\n";
  }
  put("lists/Packages", packages);
  put("lists/Translation-en", translation);
  const CliResult r = run("data debian --min-class-examples 2 --packages " + path("lists/Packages") +
                          " --translation " + path("lists/Translation-en") + " --out " + path("suite"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("60 packages, 60 used"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("section"), std::string::npos) << r.out;
  const nlohmann::json tasks = nlohmann::json::parse(test_support::slurp(dir_ / "suite" / "tasks.json"));
  EXPECT_EQ(tasks["section"]["labels"], (nlohmann::json{"libs", "utils"}));
  EXPECT_EQ(tasks["tag-use"]["labels"], (nlohmann::json{"u0", "u1", "u2"}));
  EXPECT_TRUE(fs::exists(dir_ / "suite" / "summaries" / "train.jsonl"));

  // A malformed stanza: the file and line named, nothing written.
  put("bad/Packages", "Package: p1\nSection utils\n");
  const CliResult bad = run("data debian --packages " + path("bad/Packages") + " --translation " +
                            path("lists/Translation-en") + " --out " + path("bad-suite"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("Packages:2:"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad-suite" / "tasks.json"));
  // A GLUE task added beside them.
  put("SST-2/train.tsv", "sentence\tlabel\ngood\t1\nbad\t0\n");
  put("SST-2/dev.tsv", "sentence\tlabel\nok\t1\n");
  const CliResult glue = run("data glue --dir " + path("SST-2") + " --out " + path("suite") +
                             " --task sst2 --text sentence --label label");
  ASSERT_EQ(glue.exit_code, 0) << glue.err;
  const nlohmann::json both = nlohmann::json::parse(test_support::slurp(dir_ / "suite" / "tasks.json"));
  EXPECT_TRUE(both.contains("section"));
  EXPECT_EQ(both["sst2"]["examples"]["train"], 2);
  // No indexes and no fetching allowed: a clear error, no network.
  const CliResult none = run("data debian --no-fetch --lists " + path("nowhere") + " --out " + path("x"));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("no Packages index"), std::string::npos) << none.err;
}

TEST_F(CliDataCorpora, HelpExplainsEachCommand) {
  for (const char* command : {"code", "markup", "books"}) {
    const CliResult r = run(std::string("data ") + command + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    for (const char* word : {"--out", "--root", "--max-documents", "One document per", "train,validation,test",
                             "stats.json", "byte for byte"})
      EXPECT_NE(r.out.find(word), std::string::npos) << command << ": " << word << "\n" << r.out;
    if (std::string(command) != "books") continue;
    for (const char* word : {"--min-bytes", "--dpkg-info"}) EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
}

}  // namespace
}  // namespace strata
