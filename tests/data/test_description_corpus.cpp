// The long -> short description corpus: one example a Description-md5, split by source package,
// on the fixture archive (tests/fixtures/debian/lists) and on packages made in the test.
#include "strata/data/description_corpus.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/dataset.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

const fs::path kLists = fs::path(STRATA_FIXTURES_DIR) / "debian" / "lists";
const char* const kSplits[] = {"train", "validation", "test"};

std::vector<DebianPackage> fixture_packages() {
  return read_debian_packages(kLists / "deb.example.org_debian_dists_tiny_main_binary-amd64_Packages",
                              kLists / "deb.example.org_debian_dists_tiny_main_i18n_Translation-en");
}

// A package with a long description of `words` words that names it (so no two are alike).
DebianPackage package(const std::string& name, const std::string& source, const std::string& md5,
                      std::size_t words = 30) {
  DebianPackage p;
  p.name = name;
  p.source = source;
  p.section = "utils";
  p.description_md5 = md5;
  p.short_description = "the " + name + " package";
  p.long_description = name + " is a package.";
  for (std::size_t i = 3; i < words; ++i) p.long_description += " word";
  p.long_description += ".\n\nIt is built from " + source + ".";
  return p;
}

class DescriptionCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_descriptions_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Every line of the corpus as JSON, by split.
  std::map<std::string, std::vector<nlohmann::json>> lines() const {
    std::map<std::string, std::vector<nlohmann::json>> out;
    for (const char* split : kSplits) {
      JsonlReader reader(dir_ / (std::string(split) + ".jsonl"));
      for (nlohmann::json line; reader.next(line);) out[split].push_back(line);
    }
    return out;
  }
  // Every document as the summarisation datasets are read, by id.
  std::map<std::string, Document> documents() const {
    std::map<std::string, Document> out;
    for (const char* split : kSplits) {
      DatasetReader reader(dir_ / (std::string(split) + ".jsonl"));
      Document document;
      while (reader.next(document)) {
        EXPECT_EQ(reader.last_shape(), DatasetShape::Native) << document.id;
        out[document.id] = document;
      }
    }
    return out;
  }

  DescriptionCorpusOptions quiet_options() const {
    DescriptionCorpusOptions options;
    options.quiet = true;
    return options;
  }

  fs::path dir_;
};

TEST_F(DescriptionCorpus, FixtureArchiveKeepsOneExampleAnMd5AndSkipsByReason) {
  const nlohmann::json stats = build_description_corpus(fixture_packages(), quiet_options(), dir_);
  EXPECT_EQ(stats["command"], "descriptions");
  EXPECT_EQ(stats["packages"], 9);
  EXPECT_EQ(stats["skipped"]["no_description"], 1);         // orphan: no translation
  EXPECT_EQ(stats["skipped"]["duplicate_description"], 1);  // gamma-legacy: gamma's md5
  EXPECT_EQ(stats["skipped"]["duplicate_package"], 0);
  EXPECT_EQ(stats["skipped"]["short_document"], 1);         // tiny
  EXPECT_EQ(stats["skipped"]["short_summary"], 1);          // oneword
  EXPECT_EQ(stats["all"]["documents"], 5);
  EXPECT_EQ(stats["all"]["sources"], 3);  // foo, barcode, gamma

  const std::map<std::string, Document> docs = documents();
  std::vector<std::string> ids;
  for (const auto& [id, d] : docs) ids.push_back(id);
  // gamma-legacy comes first in the index, but gamma first by name gives the example.
  EXPECT_EQ(ids, (std::vector<std::string>{"barcode-tool", "foo-doc", "gamma", "libfoo-dev", "libfoo1"}));

  const Document& libfoo = docs.at("libfoo1");
  EXPECT_EQ(libfoo.title, "libfoo1");
  EXPECT_EQ(libfoo.summary, "foo library - runtime");
  EXPECT_EQ(libfoo.text,
            "Foo is a library for reading and writing foo archives. It supports compressed archives and "
            "streaming access.\n\nThis package contains the shared library.");
  ASSERT_EQ(libfoo.root.paragraphs.size(), 2u);
  EXPECT_EQ(libfoo.root.paragraphs[0].sentences.size(), 2u);  // split like every other corpus
  EXPECT_EQ(libfoo.sentence_count(), 3u);
  // A verbatim line stays a line of its paragraph.
  EXPECT_NE(docs.at("barcode-tool").text.find("Supported formats:\n  EAN-13, UPC-A and Code 128"),
            std::string::npos)
      << docs.at("barcode-tool").text;

  // The extra fields beside the native ones.
  for (const auto& [split, list] : lines())
    for (const nlohmann::json& line : list)
      if (line["id"] == "libfoo-dev") {
        EXPECT_EQ(line["package"], "libfoo-dev");
        EXPECT_EQ(line["source"], "foo");
        EXPECT_EQ(line["section"], "libdevel");
        EXPECT_EQ(line["description_md5"], "22222222222222222222222222222222");
      }
  EXPECT_EQ(nlohmann::json::parse(read_file(dir_ / "stats.json")), stats);
}

TEST_F(DescriptionCorpus, NoSourcePackageAppearsInTwoSplits) {
  // 300 sources of three binaries each, whose descriptions share their source's boilerplate.
  std::vector<DebianPackage> packages;
  for (int s = 0; s < 300; ++s) {
    const std::string source = "src" + std::to_string(s);
    for (const char* suffix : {"", "-dev", "-doc"})
      packages.push_back(package("lib" + source + suffix, source, source + suffix));
  }
  DescriptionCorpusOptions options = quiet_options();
  options.validation_percent = 10;
  options.test_percent = 10;
  const nlohmann::json stats = build_description_corpus(packages, options, dir_);

  std::map<std::string, std::set<std::string>> splits_of_source;
  std::map<std::string, std::size_t> binaries_of_source;
  std::size_t total = 0;
  for (const auto& [split, list] : lines()) {
    EXPECT_FALSE(list.empty()) << split;
    EXPECT_EQ(stats["splits"][split]["documents"], list.size());
    std::set<std::string> sources;
    for (const nlohmann::json& line : list) {
      splits_of_source[line["source"]].insert(split);
      ++binaries_of_source[line["source"]];
      sources.insert(line["source"]);
    }
    EXPECT_EQ(stats["splits"][split]["sources"], sources.size()) << split;
    total += list.size();
  }
  EXPECT_EQ(total, 900u);
  EXPECT_EQ(splits_of_source.size(), 300u);
  for (const auto& [source, splits] : splits_of_source) {
    EXPECT_EQ(splits.size(), 1u) << source << " in " << splits.size() << " splits";
    EXPECT_EQ(binaries_of_source[source], 3u) << source;
  }
}

TEST_F(DescriptionCorpus, SourcesSharingADocumentShareASplit) {
  // gcc-N and gcc-N-cross ship one long description under other short ones (other md5s).
  std::vector<DebianPackage> packages;
  std::size_t pairs_hashed_apart = 0;
  for (int s = 0; s < 100; ++s) {
    const std::string native = "gcc-" + std::to_string(s), cross = native + "-cross";
    DebianPackage a = package(native, native, native), b = package(cross + "-arm", cross, cross);
    b.long_description = a.long_description;
    packages.push_back(a);
    packages.push_back(b);
    pairs_hashed_apart += split_of(native, 10, 10) != split_of(cross, 10, 10);
  }
  ASSERT_GT(pairs_hashed_apart, 0u) << "the test needs pairs whose own names hash to other splits";
  DescriptionCorpusOptions options = quiet_options();
  options.validation_percent = 10;
  options.test_percent = 10;
  const nlohmann::json stats = build_description_corpus(packages, options, dir_);
  EXPECT_EQ(stats["all"]["documents"], 200);
  EXPECT_EQ(stats["sources_linked_by_shared_documents"], 200);

  std::map<std::string, std::set<std::string>> splits_of_text;
  std::map<std::string, std::string> split_of_source;
  for (const char* split : kSplits) {
    DatasetReader reader(dir_ / (std::string(split) + ".jsonl"));
    for (Document d; reader.next(d);) splits_of_text[d.text].insert(split);
  }
  for (const auto& [split, list] : lines())
    for (const nlohmann::json& line : list) split_of_source[line["source"]] = split;
  EXPECT_EQ(splits_of_text.size(), 100u);
  for (const auto& [text, splits] : splits_of_text) EXPECT_EQ(splits.size(), 1u) << text;
  // The group follows its first name: gcc-N sorts before gcc-N-cross.
  for (int s = 0; s < 100; ++s) {
    const std::string native = "gcc-" + std::to_string(s);
    EXPECT_EQ(split_of_source.at(native), split_of(native, 10, 10)) << native;
    EXPECT_EQ(split_of_source.at(native + "-cross"), split_of(native, 10, 10)) << native;
  }
}

TEST_F(DescriptionCorpus, TheFirstPackageByNameWinsWhateverTheOrder) {
  std::vector<DebianPackage> packages{package("zeta", "zeta", "m1"), package("alpha", "alpha", "m1"),
                                      package("mid", "mid", "m2")};
  build_description_corpus(packages, quiet_options(), dir_);
  const std::map<std::string, Document> forward = documents();
  EXPECT_EQ(forward.count("alpha"), 1u);
  EXPECT_EQ(forward.count("zeta"), 0u);

  std::string before;
  for (const char* split : kSplits) before += read_file(dir_ / (std::string(split) + ".jsonl"));
  std::reverse(packages.begin(), packages.end());
  build_description_corpus(packages, quiet_options(), dir_);
  std::string after;
  for (const char* split : kSplits) after += read_file(dir_ / (std::string(split) + ".jsonl"));
  EXPECT_EQ(before, after);
}

TEST_F(DescriptionCorpus, WithoutAnMd5TheDescriptionsThemselvesAreCompared) {
  DebianPackage a = package("a", "a", ""), b = package("b", "b", ""), c = package("c", "c", "");
  b.long_description = a.long_description;
  b.short_description = a.short_description;  // a's descriptions again: a duplicate
  c.long_description = a.long_description;     // the same document, another summary: kept
  const nlohmann::json stats = build_description_corpus({a, b, c}, quiet_options(), dir_);
  EXPECT_EQ(stats["skipped"]["duplicate_description"], 1);
  EXPECT_EQ(stats["all"]["documents"], 2);
  const std::map<std::string, Document> docs = documents();
  EXPECT_EQ(docs.count("a") + docs.count("c"), 2u);
}

TEST_F(DescriptionCorpus, WordLimitsFilterAndTheTableColumnsAddUp) {
  std::vector<DebianPackage> packages{package("long", "s", "m1", 40), package("short", "s", "m2", 10),
                                      package("terse", "t", "m3", 40)};
  packages[2].short_description = "terse";
  DescriptionCorpusOptions options = quiet_options();
  options.min_document_words = 20;
  options.min_summary_words = 2;
  nlohmann::json stats = build_description_corpus(packages, options, dir_);
  EXPECT_EQ(stats["skipped"]["short_document"], 1);
  EXPECT_EQ(stats["skipped"]["short_summary"], 1);
  ASSERT_EQ(stats["all"]["documents"], 1);
  // "long is a package." + 37 "word" + "It is built from s." = 4 + 37 + 5 words; "the long package".
  EXPECT_DOUBLE_EQ(stats["all"]["document_words_mean"].get<double>(), 46.0);
  EXPECT_DOUBLE_EQ(stats["all"]["summary_words_mean"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(stats["all"]["compression_ratio"].get<double>(), 46.0 / 3.0);

  options.min_document_words = 5;
  options.min_summary_words = 1;
  stats = build_description_corpus(packages, options, dir_);
  EXPECT_EQ(stats["all"]["documents"], 3);
  EXPECT_EQ(documents().size(), 3u);
}

TEST_F(DescriptionCorpus, HeldOutPagesTakeTheirSourcesAndLinkedSourcesOutOfEverySplit) {
  // An installed tree: dpkg lists name the owners of three pages; one page has no owner.
  const fs::path root = dir_ / "root";
  const auto put = [&](const std::string& relative, const std::string& text) {
    fs::create_directories((root / relative).parent_path());
    write_file_atomic(root / relative, text);
  };
  put("var/lib/dpkg/info/x11-utils.list", "/.\n/usr/share/man/man1/xvinfo.1.gz\n/usr/bin/xvinfo\n");
  put("var/lib/dpkg/info/libfoo-doc:all.list", "/usr/share/man/man3/foo_open.3.gz\n");
  put("var/lib/dpkg/info/local-tool.list", "/usr/share/man/man1/local-tool.1.gz\n");  // not in the index
  put("var/lib/dpkg/info/grep.list", "/usr/share/man/man1/grep.1.gz\n");  // no page of the sets
  const fs::path pages = dir_ / "pages.jsonl";
  write_file_atomic(pages, "{\"id\": \"xvinfo(1)\", \"source\": \"/usr/share/man/man1/xvinfo.1.gz\"}\n"
                           "{\"id\": \"foo_open(3)\", \"source\": \"/usr/share/man/man3/foo_open.3.gz\"}\n"
                           "{\"id\": \"local-tool(1)\", \"source\": \"/usr/share/man/man1/local-tool.1.gz\"}\n"
                           "{\"id\": \"mine(1)\", \"source\": \"/usr/local/share/man/man1/mine.1\"}\n");

  // libfoo-doc is built from libfoo, whose -dev package shares its document with bar's.
  DebianPackage foo_dev = package("libfoo-dev", "libfoo", "m2"), bar = package("bar", "bar", "m4");
  bar.long_description = foo_dev.long_description;
  const std::vector<DebianPackage> packages{package("x11-utils", "x11-utils", "m1"), foo_dev,
                                            package("libfoo-doc", "libfoo", "m3"), bar,
                                            package("grep", "grep", "m5"), package("sed", "sed", "m6")};
  const PageSources held = sources_of_pages({pages}, root, packages);
  EXPECT_EQ(held.sources, (std::set<std::string>{"libfoo", "local-tool", "x11-utils"}));
  EXPECT_EQ(held.pages, 4u);
  EXPECT_EQ(held.unowned, 1u);

  DescriptionCorpusOptions options = quiet_options();
  options.held_out_sources = held.sources;
  const nlohmann::json stats = build_description_corpus(packages, options, dir_);
  EXPECT_EQ(stats["skipped"]["held_out"], 4);  // x11-utils, libfoo-dev, libfoo-doc, and bar (linked)
  EXPECT_EQ(stats["held_out_sources"], 3);
  std::set<std::string> kept;
  for (const auto& [id, document] : documents()) kept.insert(id);
  EXPECT_EQ(kept, (std::set<std::string>{"grep", "sed"}));

  write_file_atomic(pages, "{\"id\": \"xvinfo(1)\"}\n");
  try {
    sources_of_pages({pages}, root, packages);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pages.jsonl:1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("source"), std::string::npos) << e.what();
  }
}

TEST_F(DescriptionCorpus, NothingLeftIsAnErrorAndWritesNothing) {
  DebianPackage bare = package("bare", "bare", "m1");
  bare.long_description.clear();
  DescriptionCorpusOptions options = quiet_options();
  try {
    build_description_corpus({bare, package("small", "small", "m2", 5)}, options, dir_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("at least 20 words"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "train.jsonl"));
  EXPECT_FALSE(fs::exists(dir_ / "stats.json"));
}

}  // namespace
}  // namespace strata
