#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "strata/core/error.h"
#include "strata/doc/parse.h"
#include "doc_test_util.h"
#include "support/expect.h"

namespace strata {
namespace {

using test::kDocData;

using test_support::error_of;

TEST(Parse, FormatFromName) {
  EXPECT_EQ(format_from_name("auto"), DocFormat::Auto);
  EXPECT_EQ(format_from_name("Markdown"), DocFormat::Markdown);
  EXPECT_EQ(format_from_name("md"), DocFormat::Markdown);
  EXPECT_EQ(format_from_name("man"), DocFormat::Man);
  EXPECT_EQ(format_from_name("plain"), DocFormat::Plain);
  EXPECT_EQ(format_from_name("jsonl"), DocFormat::Jsonl);
  const std::string message = error_of([] { format_from_name("pdf"); });
  EXPECT_NE(message.find("'pdf'"), std::string::npos) << message;
  EXPECT_NE(message.find("auto, markdown, man, plain, jsonl"), std::string::npos) << message;
  for (DocFormat f : {DocFormat::Auto, DocFormat::Markdown, DocFormat::Man, DocFormat::Plain, DocFormat::Jsonl})
    EXPECT_EQ(format_from_name(format_name(f)), f);
}

TEST(Parse, DetectFormatByExtensionThenContent) {
  EXPECT_EQ(detect_format("a.md", ""), DocFormat::Markdown);
  EXPECT_EQ(detect_format("a.markdown", ""), DocFormat::Markdown);
  EXPECT_EQ(detect_format("ls.1.gz", ""), DocFormat::Man);
  EXPECT_EQ(detect_format("foo.3pm", ""), DocFormat::Man);
  EXPECT_EQ(detect_format("x.8", "# looks like markdown"), DocFormat::Man);
  EXPECT_EQ(detect_format("d.jsonl", ""), DocFormat::Jsonl);
  EXPECT_EQ(detect_format("notes.txt", ".TH X 1"), DocFormat::Plain);
  EXPECT_EQ(detect_format("README", ".\\\" comment\n.TH X 1\n"), DocFormat::Man);
  EXPECT_EQ(detect_format("README", "intro\n\n## Usage\n"), DocFormat::Markdown);
  EXPECT_EQ(detect_format("README", "just words.\n.5 is a number\n"), DocFormat::Plain);
  EXPECT_EQ(detect_format("data", "{\"article\": \"x\"}\n"), DocFormat::Jsonl);
  EXPECT_EQ(detect_format("empty", ""), DocFormat::Plain);
}

TEST(Parse, ReadsEachFormat) {
  const Document md = read_document(kDocData / "guide.md");
  EXPECT_EQ(md.title, "Guide Title");
  EXPECT_EQ(md.id, "guide.md");

  const Document man = read_document(kDocData / "widget.7");
  EXPECT_EQ(man.title, "widget(7)");
  EXPECT_EQ(man.root.children.at(0).heading, "NAME");

  const Document text = read_document(kDocData / "notes.txt");
  EXPECT_EQ(text.paragraph_count(), 2u);
  EXPECT_EQ(text.section_count(), 0u);

  // Forcing a format overrides the extension.
  const Document forced = read_document(kDocData / "guide.md", DocFormat::Plain);
  EXPECT_EQ(forced.section_count(), 0u);
  EXPECT_EQ(forced.title, "");
}

TEST(Parse, SniffsFilesWithoutAKnownExtension) {
  EXPECT_EQ(read_document(kDocData / "sniffed_roff").root.children.at(0).heading, "NAME");
  const Document md = read_document(kDocData / "sniffed_markdown");
  ASSERT_EQ(md.root.children.size(), 1u);
  EXPECT_EQ(md.root.children[0].heading, "A Heading");
  EXPECT_EQ(md.title, "");  // the document does not start with the heading
}

TEST(Parse, JsonlByIndex) {
  const Document first = read_document(kDocData / "tiny.jsonl");
  EXPECT_EQ(first.text, "First article. It has two sentences.");
  EXPECT_EQ(first.sentence_count(), 2u);
  const Document second = read_document(kDocData / "tiny.jsonl", DocFormat::Auto, 1);
  EXPECT_EQ(second.paragraph_count(), 2u);
  EXPECT_EQ(second.summary, "B.");
  const std::string message = error_of([] { read_document(kDocData / "tiny.jsonl", DocFormat::Jsonl, 2); });
  EXPECT_NE(message.find("tiny.jsonl"), std::string::npos) << message;
  EXPECT_NE(message.find("index 2 is out of range: the file holds 2 documents"), std::string::npos) << message;
}

TEST(Parse, MissingFileIsAnErrorNamingIt) {
  const std::string message = error_of([] { read_document(kDocData / "absent.md"); });
  EXPECT_NE(message.find("absent.md"), std::string::npos) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
  EXPECT_NE(error_of([] { read_document(kDocData); }).find("directory"), std::string::npos);
}

TEST(Parse, EmptyFileGivesAnEmptyDocument) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "strata_parse_empty.md";
  { std::ofstream(path) << ""; }
  const Document doc = read_document(path);
  EXPECT_TRUE(doc.empty());
  EXPECT_EQ(doc.id, "strata_parse_empty.md");
  std::filesystem::remove(path);
}

TEST(Parse, InvalidUtf8IsReplaced) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "strata_parse_bad.txt";
  { std::ofstream(path, std::ios::binary) << "bad \xff byte."; }
  EXPECT_EQ(read_document(path).text, "bad \uFFFD byte.");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace strata
