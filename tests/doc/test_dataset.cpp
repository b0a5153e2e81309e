#include "strata/doc/dataset.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "doc_test_util.h"

namespace strata {
namespace {

using test::paragraph_texts;

const std::filesystem::path kDataDir = std::filesystem::path(STRATA_FIXTURES_DIR) / "dataset";

std::vector<Document> read_all(const std::filesystem::path& path) {
  DatasetReader reader(path);
  std::vector<Document> documents;
  Document document;
  while (reader.next(document)) documents.push_back(std::move(document));
  return documents;
}

// Expects reading `path` to throw a strata::Error whose message contains every fragment.
void expect_error(const std::filesystem::path& path, const std::vector<std::string>& fragments) {
  try {
    read_all(path);
    ADD_FAILURE() << "no error reading " << path;
  } catch (const Error& e) {
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << e.what();
  }
}

TEST(DatasetReader, CnnDailyMailShape) {
  DatasetReader reader(kDataDir / "cnndm.jsonl");
  Document doc;

  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::CnnDm);
  EXPECT_EQ(doc.id, "cnn-0001");
  EXPECT_EQ(doc.title, "");
  EXPECT_EQ(doc.section_count(), 0u);
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"LONDON, England (CNN) -- The city council voted on Tuesday to "
                                      "close the old bridge. Repairs are expected to take two years."}));
  EXPECT_EQ(doc.summary, "Council votes to close the old bridge .\nRepairs will take two years .");

  // Line 2 is blank and skipped; blank lines in the article separate paragraphs, and the
  // single newline inside the first paragraph stays.
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.line(), 3u);
  EXPECT_EQ(doc.id, (kDataDir / "cnndm.jsonl").string() + ":3");
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"First paragraph, line one\nstill the first paragraph.",
                                      "Second paragraph.", "Third paragraph."}));
  EXPECT_EQ(doc.text, "First paragraph, line one\nstill the first paragraph.\n\nSecond paragraph.\n\nThird paragraph.");
  EXPECT_EQ(doc.summary, "One highlight .");

  // No blank line: every line is a paragraph. An integer id is written in decimal.
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(doc.id, "42");
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"Line one.", "Line two.", "Line three."}));
  EXPECT_EQ(doc.summary, "");

  // An empty article is an empty document; callers decide what to do with it.
  ASSERT_TRUE(reader.next(doc));
  EXPECT_TRUE(doc.empty());
  EXPECT_EQ(doc.paragraph_count(), 0u);
  EXPECT_EQ(doc.summary, "Nothing happened .");

  EXPECT_FALSE(reader.next(doc));
  EXPECT_EQ(reader.invalid_utf8_bytes(), 0u);
}

TEST(DatasetReader, DocumentSummaryShape) {
  DatasetReader reader(kDataDir / "xsum.jsonl");
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::DocumentSummary);
  EXPECT_EQ(doc.id, "29750031");
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"The sun came out over Cardiff on Monday.", "Crowds gathered along the bay."}));
  EXPECT_EQ(doc.summary, "Crowds enjoyed the sunshine in Cardiff.");
  EXPECT_FALSE(reader.next(doc));
}

TEST(DatasetReader, ArxivPubmedShape) {
  DatasetReader reader(kDataDir / "arxiv.jsonl");
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::ArxivPubmed);
  EXPECT_EQ(doc.id, "astro-ph0001001");
  EXPECT_TRUE(doc.root.paragraphs.empty());
  ASSERT_EQ(doc.root.children.size(), 2u);
  const Section& intro = doc.root.children[0];
  const Section& results = doc.root.children[1];
  EXPECT_EQ(intro.heading, "introduction");
  EXPECT_EQ(intro.level, 1);
  EXPECT_EQ(results.heading, "observations and results");
  EXPECT_EQ(results.level, 1);
  // One paragraph per sentence of the data set.
  EXPECT_EQ(paragraph_texts(doc, intro),
            std::vector<std::string>({"dwarf galaxies are dark matter dominated .",
                                      "their rotation curves test halo models ."}));
  EXPECT_EQ(paragraph_texts(doc, results),
            std::vector<std::string>({"we observed the galaxy for ten nights .",
                                      "the rotation curve is flat beyond 2 kpc ."}));
  EXPECT_EQ(doc.summary, "we measure the rotation curve of a dwarf galaxy .\nthe curve is flat .");

  // No sections: article_text is the body. Several <S> sentences in one element still
  // give one summary line each. No article_id: the id is the position.
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(doc.id, (kDataDir / "arxiv.jsonl").string() + ":2");
  EXPECT_EQ(doc.section_count(), 0u);
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"background : patients were enrolled .", "results : survival improved ."}));
  EXPECT_EQ(doc.summary, "survival improved in treated patients .\nmore trials are needed .");
  EXPECT_FALSE(reader.next(doc));
}

TEST(DatasetReader, NativeShape) {
  DatasetReader reader(kDataDir / "native.jsonl");
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::Native);
  EXPECT_EQ(doc.id, "guide-1");
  EXPECT_EQ(doc.title, "User guide");
  EXPECT_EQ(paragraph_texts(doc, doc.root), std::vector<std::string>({"This guide explains the tool."}));
  ASSERT_EQ(doc.root.children.size(), 2u);
  const Section& install = doc.root.children[0];
  EXPECT_EQ(install.heading, "Install");
  EXPECT_EQ(paragraph_texts(doc, install),
            std::vector<std::string>({"Run the installer.", "Restart the shell."}));
  const Section& usage = doc.root.children[1];
  EXPECT_EQ(usage.heading, "Usage");
  EXPECT_TRUE(usage.paragraphs.empty());
  ASSERT_EQ(usage.children.size(), 1u);
  EXPECT_EQ(usage.children[0].heading, "Options");
  EXPECT_EQ(usage.children[0].level, 2);
  EXPECT_EQ(paragraph_texts(doc, usage.children[0]), std::vector<std::string>({"Use -v for more output."}));
  EXPECT_EQ(doc.summary, "How to install and use the tool.");
  EXPECT_EQ(doc.text,
            "This guide explains the tool.\n\nRun the installer.\n\nRestart the shell.\n\nUse -v for more output.");
}

TEST(DatasetReader, MissingFileIsNamed) {
  const std::filesystem::path missing = kDataDir / "no-such-file.jsonl";
  try {
    DatasetReader reader(missing);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
  }
}

// Error cases, each from a file written for the test.
class DatasetErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("strata_dataset_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(DatasetErrors, MalformedJsonNamesFileAndLine) {
  const auto path = write("file.jsonl",
                          "{\"document\": \"a\", \"summary\": \"b\"}\n"
                          "{\"document\": \"c\", \"summary\": \"d\"}\n"
                          "{\"document\": \"e\", \n");
  DatasetReader reader(path);
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  ASSERT_TRUE(reader.next(doc));
  try {
    reader.next(doc);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("file.jsonl:3"), std::string::npos) << e.what();
  }
}

TEST_F(DatasetErrors, MissingFieldIsNamed) {
  expect_error(write("a.jsonl", "{\"article\": \"text\"}\n"), {"a.jsonl:1", "field 'highlights'", "missing"});
  expect_error(write("b.jsonl", "{\"document\": \"text\"}\n"), {"field 'summary'", "missing"});
  expect_error(write("c.jsonl", "{\"article_text\": [], \"abstract_text\": [], \"sections\": []}\n"),
               {"field 'section_names'", "missing"});
  expect_error(write("d.jsonl", "{\"title\": \"t\", \"sections\": [{\"paragraphs\": [\"p\"]}]}\n"),
               {"field 'sections[0].heading'", "missing"});
}

TEST_F(DatasetErrors, WrongTypeIsNamed) {
  expect_error(write("a.jsonl", "\n{\"document\": 5, \"summary\": \"s\"}\n"),
               {"a.jsonl:2", "field 'document'", "expected a string, got number"});
  expect_error(write("b.jsonl", "{\"id\": [1], \"document\": \"d\", \"summary\": \"s\"}\n"), {"field 'id'"});
  expect_error(write("c.jsonl",
                     "{\"abstract_text\": [], \"section_names\": [\"a\", \"b\"], \"sections\": [[\"x\"], [7]]}\n"),
               {"field 'sections[1][0]'", "expected a string, got number"});
  expect_error(write("d.jsonl", "{\"abstract_text\": \"no list\", \"section_names\": [], \"sections\": []}\n"),
               {"field 'abstract_text'", "expected an array"});
}

TEST_F(DatasetErrors, NativeFieldPathsAreNamed) {
  expect_error(write("a.jsonl",
                     R"({"title": "t", "sections": [{"heading": "A"}, {"heading": "B", "sections": [{"heading": 3}]}]})"
                     "\n"),
               {"field 'sections[1].sections[0].heading'", "expected a string, got number"});
  expect_error(write("b.jsonl", R"({"sections": [{"heading": "A", "paragraphs": ["ok", null]}]})" "\n"),
               {"field 'sections[0].paragraphs[1]'", "expected a string, got null"});
  expect_error(write("c.jsonl", R"({"sections": [{"heading": "A", "paragraph": ["misspelt"]}]})" "\n"),
               {"field 'sections[0].paragraph'", "unknown field"});
  expect_error(write("d.jsonl", R"({"title": "t", "paragraphs": "not a list"})" "\n"),
               {"field 'paragraphs'", "expected an array, got string"});
  expect_error(write("e.jsonl", R"({"sections": ["A"]})" "\n"), {"field 'sections[0]'", "expected a section object"});
}

TEST_F(DatasetErrors, ArxivSectionCountMismatch) {
  expect_error(write("a.jsonl",
                     R"({"abstract_text": [], "section_names": ["a", "b", "c"], "sections": [["x"], ["y"]]})" "\n"),
               {"a.jsonl:1", "field 'sections'", "has 2 entries but section_names has 3"});
}

TEST_F(DatasetErrors, UnknownShapeListsFieldsFound) {
  expect_error(write("a.jsonl", R"({"sentence": "x", "label": 1})" "\n"),
               {"a.jsonl:1: expected one of the shapes", "(fields found: label, sentence)"});
  expect_error(write("b.jsonl", "{}\n"), {"(fields found: none)"});
}

TEST_F(DatasetErrors, TextShapeWrongTypeIsNamed) {
  expect_error(write("a.jsonl", R"({"id": "x", "text": ["not", "a string"]})" "\n"),
               {"a.jsonl:1", "field 'text'", "expected a string"});
}

TEST_F(DatasetErrors, InvalidUtf8IsReplacedAndCounted) {
  const auto path = write("a.jsonl", "{\"document\": \"caf\xff\xfe ok.\", \"summary\": \"s\"}\n");
  DatasetReader reader(path);
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.invalid_utf8_bytes(), 2u);
  EXPECT_EQ(doc.text, "caf\xEF\xBF\xBD\xEF\xBF\xBD ok.");
}

TEST_F(DatasetErrors, BlankLinesAreSkipped) {
  const auto path = write("a.jsonl",
                          "\n   \n{\"document\": \"a\", \"summary\": \"b\"}\r\n\t\n"
                          "{\"document\": \"c\", \"summary\": \"d\"}\n\n");
  DatasetReader reader(path);
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.line(), 3u);
  EXPECT_EQ(doc.text, "a");
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.line(), 5u);
  EXPECT_EQ(doc.text, "c");
  EXPECT_FALSE(reader.next(doc));
}

class DatasetTextShape : public DatasetErrors {};

// Code and roff need their newlines and indentation: the text shape keeps the text byte for
// byte, with paragraphs and sentences spanning into it where they lie.
TEST_F(DatasetTextShape, KeepsTheTextVerbatim) {
  const std::string code =
      "\n  // leading blank line and indentation\nint main() {\n\treturn 0;   \n}\n\n\n\n"
      ".TH LS 1\r\n.SH NAME\nls \\- list. Two sentences here.\n";
  const nlohmann::json line = {{"id", "main.c"}, {"text", code}, {"title", "ignored"}};
  const std::filesystem::path path = write("a.jsonl", line.dump() + "\n{\"text\": \"\"}\n");
  DatasetReader reader(path);
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::Text);
  EXPECT_EQ(doc.id, "main.c");
  EXPECT_EQ(doc.text, code);
  EXPECT_EQ(paragraph_texts(doc, doc.root),
            std::vector<std::string>({"// leading blank line and indentation\nint main() {\n\treturn 0;   \n}",
                                      ".TH LS 1\r\n.SH NAME\nls \\- list. Two sentences here."}));
  const Paragraph& last = doc.root.paragraphs.back();
  ASSERT_FALSE(last.sentences.empty());
  EXPECT_EQ(doc.slice(last.sentences.back()), "Two sentences here.");
  EXPECT_EQ(last.sentences.back().end, last.span.end);

  ASSERT_TRUE(reader.next(doc));
  EXPECT_TRUE(doc.empty());
  EXPECT_EQ(doc.id, path.string() + ":2");
}

TEST(DatasetShapeName, NamesEachShape) {
  EXPECT_STREQ(shape_name(DatasetShape::CnnDm), "cnn_dailymail");
  EXPECT_STREQ(shape_name(DatasetShape::DocumentSummary), "document_summary");
  EXPECT_STREQ(shape_name(DatasetShape::ArxivPubmed), "arxiv_pubmed");
  EXPECT_STREQ(shape_name(DatasetShape::Native), "native");
  EXPECT_STREQ(shape_name(DatasetShape::Text), "text");
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(DatasetScientificPapers, ArticleAbstractStringsAreAFlatDocument) {
  DatasetReader reader(std::filesystem::path(STRATA_FIXTURES_DIR) / "dataset" / "scientific_papers.jsonl");
  Document doc;
  ASSERT_TRUE(reader.next(doc));
  EXPECT_EQ(reader.last_shape(), DatasetShape::ArticleAbstract);
  EXPECT_EQ(doc.section_count(), 0u);
  ASSERT_EQ(doc.root.paragraphs.size(), 2u);
  EXPECT_EQ(doc.slice(doc.root.paragraphs[1].span), "the method is simple .");
  EXPECT_EQ(doc.summary, "we study long documents .\nit works .");
  try {
    reader.next(doc);
    FAIL() << "expected an error for a non-string abstract";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scientific_papers.jsonl:2: field 'abstract'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata
