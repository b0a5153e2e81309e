#include <gtest/gtest.h>

#include <unistd.h>

#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/doc/dataset.h"

namespace strata {
namespace {

using nlohmann::json;

// A tree with skipped heading ranks (# then ###), an empty section, a paragraph holding a
// blank line, several sentences and non-ASCII text.
Document nested_document() {
  DocumentBuilder builder("Guide — café");
  builder.add_paragraph("Intro before any heading. It has two sentences.");
  builder.open_section("A", 1);
  builder.add_paragraph("Text of A.");
  builder.open_section("A.1.1", 3);  // skipped rank: still depth 2
  builder.add_paragraph("Deep text. Dr. Smith said so!");
  builder.add_paragraph("code line one\n\ncode line two");
  builder.open_section("A.2", 2);
  builder.add_paragraph("Text of A.2.");
  builder.open_section("B (empty)", 1);
  builder.open_section("C", 1);
  builder.open_section("C.1", 2);
  builder.open_section("C.1.1", 3);
  builder.add_paragraph("Innermost — ü.");
  Document document = builder.finish();
  document.id = "doc-7";
  document.summary = "First line .\nSecond line .";
  return document;
}

void expect_same_section(const Section& a, const Section& b) {
  EXPECT_EQ(a.heading, b.heading);
  EXPECT_EQ(a.level, b.level) << a.heading;
  ASSERT_EQ(a.paragraphs.size(), b.paragraphs.size()) << a.heading;
  for (std::size_t i = 0; i < a.paragraphs.size(); ++i) {
    EXPECT_EQ(a.paragraphs[i].span, b.paragraphs[i].span) << a.heading;
    EXPECT_EQ(a.paragraphs[i].sentences, b.paragraphs[i].sentences) << a.heading;
  }
  ASSERT_EQ(a.children.size(), b.children.size()) << a.heading;
  for (std::size_t i = 0; i < a.children.size(); ++i) expect_same_section(a.children[i], b.children[i]);
}

void expect_same_document(const Document& a, const Document& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.title, b.title);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.summary, b.summary);
  expect_same_section(a.root, b.root);
}

TEST(NativeJson, WritesTheTreeAsNestedObjects) {
  const json object = to_native_json(nested_document());
  EXPECT_EQ(object["id"], "doc-7");
  EXPECT_EQ(object["title"], "Guide — café");
  EXPECT_EQ(object["paragraphs"], json::array({"Intro before any heading. It has two sentences."}));
  EXPECT_EQ(object["summary"], "First line .\nSecond line .");
  const json& sections = object["sections"];
  ASSERT_EQ(sections.size(), 3u);
  EXPECT_EQ(sections[0]["heading"], "A");
  EXPECT_EQ(sections[0]["sections"][0]["heading"], "A.1.1");
  EXPECT_EQ(sections[0]["sections"][0]["paragraphs"],
            json::array({"Deep text. Dr. Smith said so!", "code line one\n\ncode line two"}));
  EXPECT_EQ(sections[0]["sections"][1]["heading"], "A.2");
  // Empty lists are left out of section objects.
  EXPECT_EQ(sections[1], json({{"heading", "B (empty)"}}));
  EXPECT_EQ(sections[2]["sections"][0]["sections"][0]["paragraphs"], json::array({"Innermost — ü."}));
}

TEST(NativeJson, RoundTripReproducesTextSpansAndTree) {
  const Document original = nested_document();
  const Document copy = from_native_json(to_native_json(original), "memory", 0);
  expect_same_document(original, copy);
  ASSERT_EQ(copy.root.children.size(), 3u);
  EXPECT_EQ(copy.root.children[0].children[0].level, 2);
  EXPECT_EQ(copy.root.children[2].children[0].children[0].level, 3);
  EXPECT_EQ(copy.section_count(), 7u);
}

TEST(NativeJson, RoundTripThroughSerialisedText) {
  const Document original = nested_document();
  const json parsed = json::parse(to_native_json(original).dump());
  expect_same_document(original, from_native_json(parsed, "memory", 0));
}

TEST(NativeJson, MissingOptionalFieldsDefault) {
  const Document doc = from_native_json(json::parse(R"({"sections": [{"heading": "Only"}]})"), "x.jsonl", 4);
  EXPECT_EQ(doc.id, "x.jsonl:4");
  EXPECT_EQ(doc.title, "");
  EXPECT_EQ(doc.summary, "");
  EXPECT_TRUE(doc.empty());
  ASSERT_EQ(doc.root.children.size(), 1u);
  EXPECT_EQ(doc.root.children[0].heading, "Only");
}

TEST(NativeJson, RejectsNestingBeyondTheLimit) {
  json sections = json::array({{{"heading", "leaf"}}});
  for (int depth = 0; depth < 150; ++depth) sections = json::array({{{"heading", "h"}, {"sections", sections}}});
  json object = {{"title", "deep"}, {"sections", sections}};
  try {
    from_native_json(object, "deep.jsonl", 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

class NativeJsonl : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("strata_native_") + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(NativeJsonl, WrittenFileReadsBackThroughDatasetReader) {
  Document second;
  {
    DocumentBuilder builder("Second");
    builder.add_paragraph("Only a paragraph.");
    second = builder.finish();
    second.id = "doc-8";
  }
  const std::vector<Document> documents = {nested_document(), second};
  const std::filesystem::path path = dir_ / "out.jsonl";
  write_native_jsonl(path, documents);

  DatasetReader reader(path);
  Document doc;
  for (const Document& expected : documents) {
    ASSERT_TRUE(reader.next(doc));
    EXPECT_EQ(reader.last_shape(), DatasetShape::Native);
    expect_same_document(expected, doc);
  }
  EXPECT_FALSE(reader.next(doc));
  EXPECT_EQ(reader.line(), 2u);
}

TEST_F(NativeJsonl, UncommittedWriterLeavesNoFile) {
  const std::filesystem::path path = dir_ / "out.jsonl";
  {
    NativeJsonlWriter writer(path);
    writer.write(nested_document());
    EXPECT_EQ(writer.count(), 1u);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

}  // namespace
}  // namespace strata
