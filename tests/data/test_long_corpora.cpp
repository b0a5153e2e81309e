// The long language-model corpora (code, markup, books) on small trees made in a temp dir.
#include "strata/data/long_corpora.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/dataset.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

const char* const kSplits[] = {"train", "validation", "test"};

struct Written {
  std::string split;
  std::string text;
};

// Every document of a corpus directory, read back as the language-model data path reads it.
std::map<std::string, Written> read_corpus(const fs::path& dir) {
  std::map<std::string, Written> documents;
  for (const char* split : kSplits) {
    DatasetReader reader(dir / (std::string(split) + ".jsonl"));
    Document document;
    while (reader.next(document)) {
      EXPECT_EQ(reader.last_shape(), DatasetShape::Text);
      documents[document.id] = {split, document.text};
    }
  }
  return documents;
}

// Expects `build` to throw a strata::Error whose message contains `fragment`.
template <class Build>
void expect_error(Build&& build, const std::string& fragment) {
  try {
    build();
    ADD_FAILURE() << "no error; expected one naming " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

class LongCorpora : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_long_corpora_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  fs::path write_gz(const std::string& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    gzFile file = gzopen(path.c_str(), "wb");
    gzwrite(file, text.data(), static_cast<unsigned>(text.size()));
    gzclose(file);
    return path;
  }
  void link(const fs::path& target, const std::string& relative) {
    fs::create_symlink(target, dir_ / relative);
  }
  template <class Options>
  Options options(const std::string& root) {
    Options o;
    o.root = dir_ / root;
    o.out_dir = dir_ / "out";
    o.quiet = true;
    return o;
  }

  fs::path dir_;
};

// ---- code ----

const std::string kIndented = "  int a;   // indented\n\n\n\tint tab;\n";

class CodeCorpus : public LongCorpora {
 protected:
  void SetUp() override {
    LongCorpora::SetUp();
    write("include/alpha/b.h", "int b;\n");
    write("include/alpha/a.h", kIndented);
    write("include/alpha/sub/c.h", "c");  // no final newline
    write("include/alpha/blob.bin", std::string("ELF\0\1", 5));
    link("a.h", "include/alpha/link_in.h");
    link(write("outside.h", "int outside;\n"), "include/alpha/link_out.h");
    link("missing.h", "include/alpha/broken.h");
    write("include/loose.h", "#define LOOSE 1\n");
    write("include/binary.dat", std::string("\0\0", 2));
    write("include/only_binary/x.bin", std::string("\0", 1));
    link("alpha", "include/alias");
  }
};

TEST_F(CodeCorpus, OneDocumentPerTopLevelEntryInPathOrder) {
  const nlohmann::json stats = build_code_corpus(options<CodeCorpusOptions>("include"));
  const std::map<std::string, Written> documents = read_corpus(dir_ / "out");
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents.at("alpha").text,
            "==> alpha/a.h <==\n" + kIndented + "==> alpha/b.h <==\nint b;\n==> alpha/sub/c.h <==\nc\n");
  EXPECT_EQ(documents.at("loose.h").text, "==> loose.h <==\n#define LOOSE 1\n");
  EXPECT_EQ(code_file_header("alpha/sub/c.h"), "==> alpha/sub/c.h <==");

  EXPECT_EQ(stats["command"], "code");
  EXPECT_EQ(stats["root"], (dir_ / "include").string());
  EXPECT_EQ(stats["skipped"]["binary"], 3);
  EXPECT_EQ(stats["skipped"]["no_text"], 1);  // only_binary/
  EXPECT_EQ(stats["skipped"]["link_inside_root"], 2);  // alpha/link_in.h and the alias of alpha/
  EXPECT_EQ(stats["skipped"]["link_outside_root"], 1);
  EXPECT_EQ(stats["skipped"]["broken_link"], 1);
}

TEST_F(CodeCorpus, SplitsByTheIdsHashAndCountsEverySplit) {
  for (int i = 0; i < 60; ++i) write("include/file" + std::to_string(i) + ".h", std::string(i + 1, 'x'));
  const nlohmann::json stats = build_code_corpus(options<CodeCorpusOptions>("include"));
  const std::map<std::string, Written> documents = read_corpus(dir_ / "out");
  ASSERT_EQ(documents.size(), 62u);
  std::map<std::string, std::size_t> counts, bytes;
  for (const auto& [id, written] : documents) {
    EXPECT_EQ(written.split, split_of(id, 5, 5)) << id;
    ++counts[written.split];
    bytes[written.split] += written.text.size();
  }
  std::size_t all_bytes = 0;
  for (const char* split : kSplits) {
    EXPECT_EQ(stats["splits"][split]["documents"], counts[split]) << split;
    EXPECT_EQ(stats["splits"][split]["bytes"], bytes[split]) << split;
    all_bytes += bytes[split];
  }
  EXPECT_EQ(stats["all"]["documents"], 62);
  EXPECT_EQ(stats["all"]["bytes"], all_bytes);
  EXPECT_GT(counts["train"], counts["validation"] + counts["test"]);
  EXPECT_EQ(nlohmann::json::parse(read_file(dir_ / "out" / "stats.json")), stats);
}

TEST_F(CodeCorpus, OutputIsDeterministic) {
  CodeCorpusOptions first = options<CodeCorpusOptions>("include");
  CodeCorpusOptions second = first;
  second.out_dir = dir_ / "again";
  build_code_corpus(first);
  build_code_corpus(second);
  for (const char* file : {"train.jsonl", "validation.jsonl", "test.jsonl", "stats.json"})
    EXPECT_EQ(read_file(first.out_dir / file), read_file(second.out_dir / file)) << file;
}

TEST_F(CodeCorpus, MaxDocumentsKeepsTheFirstInPathOrder) {
  CodeCorpusOptions o = options<CodeCorpusOptions>("include");
  o.max_documents = 1;
  EXPECT_EQ(build_code_corpus(o)["all"]["documents"], 1);
  const std::map<std::string, Written> documents = read_corpus(o.out_dir);
  ASSERT_EQ(documents.size(), 1u);
  EXPECT_EQ(documents.begin()->first, "alpha");
}

TEST_F(CodeCorpus, InvalidUtf8IsReplacedSoTheTextReadsBackExactly) {
  write("include/latin1.h", "caf\xe9\n");
  const nlohmann::json stats = build_code_corpus(options<CodeCorpusOptions>("include"));
  EXPECT_EQ(stats["invalid_utf8_bytes"], 1);
  EXPECT_EQ(read_corpus(dir_ / "out").at("latin1.h").text, "==> latin1.h <==\ncaf\xEF\xBF\xBD\n");
}

TEST_F(LongCorpora, MissingRootIsAnErrorNamingItAndWritesNothing) {
  expect_error([&] { build_code_corpus(options<CodeCorpusOptions>("nowhere")); }, "nowhere");
  expect_error([&] { build_markup_corpus(options<MarkupCorpusOptions>("nowhere")); }, "nowhere");
  BooksCorpusOptions books = options<BooksCorpusOptions>("");
  books.dpkg_info = dir_ / "no-dpkg-info";
  expect_error([&] { build_books_corpus(books); }, "no-dpkg-info");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// ---- markup ----

const std::string kPage =
    ".\\\" a comment\n.TH LS 1\n.SH NAME\nls \\- list directory contents\n.SH DESCRIPTION\n"
    ".nf\n    indented example\n.fi\n";

class MarkupCorpus : public LongCorpora {
 protected:
  void SetUp() override {
    LongCorpora::SetUp();
    write_gz("man/man1/ls.1.gz", kPage);
    write("man/man1/plain.1", ".TH PLAIN 1\n.SH NAME\nplain \\- a plain page\n");
    write("man/man1/dir.1", ".\\\" Redirect only.\n\n.so man1/ls.1\n");
    write("man/man1/more.1", ".so man1/ls.1\nText of its own.\n");
    link("ls.1.gz", "man/man1/link.1.gz");
    write("man/man3/printf.3", ".TH PRINTF 3\n");
    write("man/de/man1/ls.1", ".TH LS 1\n.SH BEZEICHNUNG\n");  // not English: not under man*/
  }
};

TEST_F(MarkupCorpus, RawRoffOfEveryPageExceptRedirectsAndLinks) {
  const nlohmann::json stats = build_markup_corpus(options<MarkupCorpusOptions>("man"));
  const std::map<std::string, Written> documents = read_corpus(dir_ / "out");
  ASSERT_EQ(documents.size(), 4u);
  EXPECT_EQ(documents.at("man1/ls.1").text, kPage);  // inflated, byte for byte
  EXPECT_EQ(documents.at("man1/plain.1").text, ".TH PLAIN 1\n.SH NAME\nplain \\- a plain page\n");
  EXPECT_EQ(documents.at("man1/more.1").text, ".so man1/ls.1\nText of its own.\n");
  EXPECT_EQ(documents.at("man3/printf.3").text, ".TH PRINTF 3\n");
  EXPECT_EQ(stats["command"], "markup");
  EXPECT_EQ(stats["skipped"]["redirect"], 1);
  EXPECT_EQ(stats["skipped"]["link"], 1);
}

TEST_F(MarkupCorpus, CorruptGzipIsAnErrorNamingTheFileAndOldOutputsStay) {
  const MarkupCorpusOptions o = options<MarkupCorpusOptions>("man");
  build_markup_corpus(o);
  const std::string train = read_file(o.out_dir / "train.jsonl");
  const std::string stats = read_file(o.out_dir / "stats.json");
  write("man/man1/bad.1.gz", std::string("\x1f\x8b\x08\x00garbage", 12));
  expect_error([&] { build_markup_corpus(o); }, "bad.1.gz");
  EXPECT_EQ(read_file(o.out_dir / "train.jsonl"), train);
  EXPECT_EQ(read_file(o.out_dir / "stats.json"), stats);
  for (const fs::directory_entry& entry : fs::directory_iterator(o.out_dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// ---- books ----

const std::string kToolPage =
    ".TH TOOL 1\n.SH NAME\ntool \\- do things\n.SH DESCRIPTION\nThe tool does things well.\n";

class BooksCorpus : public LongCorpora {
 protected:
  void SetUp() override {
    LongCorpora::SetUp();
    write_gz("sys/usr/share/man/man1/tool.1.gz", kToolPage);
    write("sys/usr/share/man/man1/tool-alias.1", ".so man1/tool.1\n");
    write("sys/usr/share/man/de/man1/tool.1", ".TH TOOL 1\n.SH NAME\ntool \\- Dinge tun\n");
    write("sys/usr/share/doc/tool/README", "Tool\n====\n\n    indented usage\n");
    write_gz("sys/usr/share/doc/tool/changelog.Debian.gz", "tool (1.0) unstable; urgency=low\n");
    write("sys/usr/share/doc/tool/notes.txt", "Notes.\n");
    write("sys/usr/share/doc/tool/copyright", "Copyright text.\n");
    write("sys/usr/share/doc/tool/index.html", "<p>html</p>\n");
    write("sys/usr/share/doc/small/README", "tiny\n");
    const std::string tool_list =
        "/.\n/usr\n/usr/share/man/man1/tool.1.gz\n/usr/share/man/man1/tool-alias.1\n"
        "/usr/share/man/de/man1/tool.1\n/usr/share/doc/tool\n/usr/share/doc/tool/README\n"
        "/usr/share/doc/tool/NEWS.gz\n/usr/share/doc/tool/changelog.Debian.gz\n"
        "/usr/share/doc/tool/notes.txt\n/usr/share/doc/tool/copyright\n/usr/share/doc/tool/index.html\n";
    write("info/tool:amd64.list", tool_list);  // NEWS.gz is listed but absent
    write("info/tool:i386.list", tool_list);
    write("info/tool:amd64.md5sums", "not a list\n");
    write("info/small.list", "/usr/share/doc/small/README\n");
  }
  BooksCorpusOptions books_options() {
    BooksCorpusOptions o = options<BooksCorpusOptions>("sys");
    o.dpkg_info = dir_ / "info";
    o.min_bytes = 50;
    return o;
  }
};

TEST_F(BooksCorpus, RenderedPagesThenDocsPerPackage) {
  const nlohmann::json stats = build_books_corpus(books_options());
  const std::map<std::string, Written> documents = read_corpus(dir_ / "out");
  ASSERT_EQ(documents.size(), 1u);
  const std::string& text = documents.at("tool").text;
  // The page rendered (no roff), headings on lines of their own, then the docs in path order,
  // each verbatim, parts joined by one blank line.
  const std::string page_part = "NAME\n\ntool - do things\n\nDESCRIPTION\n\nThe tool does things well.";
  const std::string docs_part =
      "\n\nTool\n====\n\n    indented usage\n\ntool (1.0) unstable; urgency=low\n\nNotes.\n";
  ASSERT_NE(text.find(page_part), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with(page_part + docs_part)) << text;
  EXPECT_EQ(text.find(".TH"), std::string::npos) << text;
  for (const char* absent : {"Dinge", "Copyright", "html"}) EXPECT_EQ(text.find(absent), std::string::npos) << absent;

  EXPECT_EQ(stats["command"], "books");
  EXPECT_EQ(stats["dpkg_info"], (dir_ / "info").string());
  EXPECT_EQ(stats["min_bytes"], 50);
  EXPECT_EQ(stats["skipped"]["duplicate"], 1);  // tool:i386
  EXPECT_EQ(stats["skipped"]["short"], 1);      // small
}

TEST_F(BooksCorpus, AnUnreadableListedFileIsAnErrorNamingIt) {
  write("sys/usr/share/doc/tool/NEWS.gz", std::string("\x1f\x8b\x08\x00garbage", 12));
  expect_error([&] { build_books_corpus(books_options()); }, "NEWS.gz");
  EXPECT_FALSE(fs::exists(dir_ / "out" / "train.jsonl"));
}

}  // namespace
}  // namespace strata
