#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/doc/plain_text.h"

namespace strata {
namespace {

std::vector<std::string> paragraphs(const Document& doc) {
  std::vector<std::string> out;
  for (const Paragraph& p : doc.root.paragraphs) out.emplace_back(doc.slice(p.span));
  return out;
}

TEST(PlainText, BlankLinesSeparateParagraphs) {
  const Document doc = parse_plain_text("  First line.\nSecond line.\n\n \t \nNext # para.\n\n\n");
  EXPECT_EQ(paragraphs(doc), (std::vector<std::string>{"First line.\nSecond line.", "Next # para."}));
  EXPECT_EQ(doc.text, "First line.\nSecond line.\n\nNext # para.");
  EXPECT_EQ(doc.section_count(), 0u);
  EXPECT_EQ(doc.title, "");
  ASSERT_EQ(doc.root.paragraphs[0].sentences.size(), 2u);
  EXPECT_EQ(doc.slice(doc.root.paragraphs[0].sentences[1]), "Second line.");
}

TEST(PlainText, EmptyAndNoTrailingNewline) {
  EXPECT_TRUE(parse_plain_text("").empty());
  EXPECT_TRUE(parse_plain_text("\n \n").empty());
  EXPECT_EQ(paragraphs(parse_plain_text("one\n\ntwo")), (std::vector<std::string>{"one", "two"}));
}

TEST(PlainText, CrLf) {
  EXPECT_EQ(paragraphs(parse_plain_text("a.\r\n\r\nb.\r\n")), (std::vector<std::string>{"a.", "b."}));
}

}  // namespace
}  // namespace strata
