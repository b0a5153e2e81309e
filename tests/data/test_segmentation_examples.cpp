#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/data/segmentation_examples.h"
#include "strata/doc/dataset.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"
#include "text/text_test_util.h"

namespace strata {
namespace {

using test_support::error_of;
using test_support::SepWordTokenizer;
using test_support::WordTokenizer;

class NoBosTokenizer : public WordTokenizer {
 public:
  NoBosTokenizer() { specials_.bos.clear(); }
  const SpecialTokens& specials() const override { return specials_; }

 private:
  SpecialTokens specials_ = WordTokenizer().specials();
};

// Sentences (tokens):  s0 "R1 r2." (0-1, root)  s1 "A1 a2 a3." (2-4, A)  s2 "A4 a5." (5-6, A)
// s3 "C1 c2 c3 c4." (7-10, C)  s4 "C5 c6." (11-12, C). B holds only C: no sentence of its own.
// Sections in pre-order: root 0, A 1, B 2, C 3.
Document three_section_document() {
  DocumentBuilder b("title");
  b.add_paragraph("R1 r2.");
  b.open_section("A", 1);
  b.add_paragraph("A1 a2 a3. A4 a5.");
  b.open_section("B", 1);
  b.open_section("C", 2);
  b.add_paragraph("C1 c2 c3 c4. C5 c6.");
  Document document = b.finish();
  document.id = "doc";
  return document;
}

std::string text_of(const Tokenizer& tokenizer, const SegmentationExample& example) {
  return tokenizer.decode(example.layout.token);
}

TEST(SegmentationExamples, OneCandidateBetweenConsecutiveSentencesLabelledBySectionChange) {
  const SepWordTokenizer tokenizer;
  SegmentationOptions options;
  options.context_tokens = 3;
  const std::vector<SegmentationExample> examples =
      make_segmentation_examples(three_section_document(), tokenizer, options);

  ASSERT_EQ(examples.size(), 4u);
  EXPECT_EQ(examples[0].id, "doc:0");
  EXPECT_EQ(examples[3].id, "doc:3");
  // root→A, inside A, A→C (across the empty B), inside C.
  EXPECT_EQ(examples[0].label, 1);
  EXPECT_EQ(examples[1].label, 0);
  EXPECT_EQ(examples[2].label, 1);
  EXPECT_EQ(examples[3].label, 0);

  // Contexts are cut to 3 tokens each, crossing sentences; near the ends they are shorter.
  EXPECT_EQ(text_of(tokenizer, examples[0]), "<s> R1 r2. [SEP] A1 a2 a3. [SEP]");
  EXPECT_EQ(text_of(tokenizer, examples[1]), "<s> A1 a2 a3. [SEP] A4 a5. C1 [SEP]");
  EXPECT_EQ(text_of(tokenizer, examples[2]), "<s> a3. A4 a5. [SEP] C1 c2 c3 [SEP]");
  EXPECT_EQ(text_of(tokenizer, examples[3]), "<s> c2 c3 c4. [SEP] C5 c6. [SEP]");
}

TEST(SegmentationExamples, LayoutKeepsTheDocumentsIdsAndSplitsSegmentsAtTheFirstSep) {
  const SepWordTokenizer tokenizer;
  SegmentationOptions options;
  options.context_tokens = 3;
  const Document document = three_section_document();
  const Layout layout = make_segmentation_examples(document, tokenizer, options)[2].layout;

  // <s> a3. A4 a5. [SEP] C1 c2 c3 [SEP]
  using Ids = std::vector<std::int32_t>;
  EXPECT_EQ(layout.position, (Ids{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(layout.segment, (Ids{0, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(layout.sentence, (Ids{-1, 1, 2, 2, -1, 3, 3, 3, -1}));
  EXPECT_EQ(layout.paragraph, (Ids{-1, 1, 1, 1, -1, 2, 2, 2, -1}));
  EXPECT_EQ(layout.section, (Ids{0, 1, 1, 1, 0, 3, 3, 3, 0}));
  EXPECT_EQ(layout.token.front(), *tokenizer.bos_id());
  EXPECT_EQ(layout.token[4], *tokenizer.sep_id());
  EXPECT_EQ(layout.token.back(), *tokenizer.sep_id());
  EXPECT_EQ(layout.tree.size(), 4);
  EXPECT_EQ(layout.tree.heading[3], "C");
}

TEST(SegmentationExamples, ContextsLongerThanTheDocumentTakeEverythingOnEachSide) {
  const SepWordTokenizer tokenizer;
  const std::vector<SegmentationExample> examples =
      make_segmentation_examples(three_section_document(), tokenizer, {});  // 128 tokens
  ASSERT_EQ(examples.size(), 4u);
  EXPECT_EQ(text_of(tokenizer, examples[2]), "<s> R1 r2. A1 a2 a3. A4 a5. [SEP] C1 c2 c3 c4. C5 c6. [SEP]");
}

TEST(SegmentationExamples, WithoutSepTheSeparatorIsEos) {
  const WordTokenizer tokenizer;  // no [SEP]
  SegmentationOptions options;
  options.context_tokens = 1;
  const std::vector<SegmentationExample> examples =
      make_segmentation_examples(three_section_document(), tokenizer, options);
  EXPECT_EQ(text_of(tokenizer, examples[0]), "<s> r2. </s> A1 </s>");
}

TEST(SegmentationExamples, ASubsampleIsEvenlySpacedWhateverTheLabel) {
  const SepWordTokenizer tokenizer;
  SegmentationOptions options;
  options.max_candidates_per_document = 2;
  std::vector<std::string> ids;
  for (const SegmentationExample& e : make_segmentation_examples(three_section_document(), tokenizer, options))
    ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"doc:1", "doc:3"}));
  options.max_candidates_per_document = 4;  // as many as there are: all of them
  EXPECT_EQ(make_segmentation_examples(three_section_document(), tokenizer, options).size(), 4u);
}

TEST(SegmentationExamples, FewerThanTwoSentencesGiveNoCandidate) {
  const SepWordTokenizer tokenizer;
  DocumentBuilder b("one");
  b.open_section("Only", 1);
  b.add_paragraph("Just one sentence here.");
  EXPECT_TRUE(make_segmentation_examples(b.finish(), tokenizer, {}).empty());
  EXPECT_TRUE(make_segmentation_examples(DocumentBuilder("empty").finish(), tokenizer, {}).empty());
}

TEST(SegmentationExamples, BadOptionsAndTokenizersAreErrors) {
  const SepWordTokenizer tokenizer;
  SegmentationOptions options;
  options.context_tokens = 0;
  EXPECT_NE(error_of([&] { make_segmentation_examples(three_section_document(), tokenizer, options); })
                .find("context_tokens"),
            std::string::npos);
  const NoBosTokenizer no_bos;
  EXPECT_NE(error_of([&] { make_segmentation_examples(three_section_document(), no_bos, {}); }).find("bos"),
            std::string::npos);
}

class LoadSegmentation : public ::testing::Test {
 protected:
  void write(const std::vector<nlohmann::json>& lines) {
    std::ofstream out(file_);
    for (const nlohmann::json& line : lines) out << line.dump() << "\n";
  }
  // The loader tokenizes in parallel: every word is registered up front so that encode only
  // reads the tokenizer's vocabulary.
  SepWordTokenizer tokenizer_ = [] {
    SepWordTokenizer t;
    t.encode("R1 r2. A1 a2 a3. A4 a5. C1 c2 c3 c4. C5 c6. Just one sentence here. First part. Second part. x");
    return t;
  }();
  test::TempDir dir_{"segmentation"};
  std::filesystem::path file_ = dir_ / "data.jsonl";
};

TEST_F(LoadSegmentation, ExamplesInFileOrderWithCountsAndOneSentenceDocumentsSkipped) {
  nlohmann::json native = to_native_json(three_section_document());
  write({native,
         {{"document", "Just one sentence here."}, {"summary", "x"}},
         {{"id", "plain"}, {"document", "First part. Second part."}, {"summary", "x"}}});
  SegmentationLoadStats stats;
  SegmentationOptions options;
  options.context_tokens = 3;
  const std::vector<SegmentationExample> examples =
      load_segmentation_examples(file_, tokenizer_, options, false, &stats);

  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.skipped, 1u);
  EXPECT_EQ(stats.candidates, 5u);
  EXPECT_EQ(stats.boundaries, 2u);
  ASSERT_EQ(examples.size(), 5u);
  const std::vector<SegmentationExample> direct =
      make_segmentation_examples(three_section_document(), tokenizer_, options);
  for (std::size_t i = 0; i < direct.size(); ++i) {
    EXPECT_EQ(examples[i].id, direct[i].id);
    EXPECT_EQ(examples[i].layout.token, direct[i].layout.token);
    EXPECT_EQ(examples[i].label, direct[i].label);
  }
  EXPECT_EQ(examples[4].id, "plain:0");
  EXPECT_EQ(examples[4].label, 0);  // no sections: no boundary
  EXPECT_EQ(segmentation_costs(examples)[4], examples[4].layout.size());
}

TEST_F(LoadSegmentation, NoCandidateAnywhereIsAnErrorNamingTheFile) {
  write({{{"document", "Just one sentence here."}, {"summary", "x"}}});
  const std::string message = error_of([&] { load_segmentation_examples(file_, tokenizer_, {}, false); });
  EXPECT_NE(message.find(file_.string()), std::string::npos) << message;
  EXPECT_NE(message.find("two sentences"), std::string::npos) << message;
}

TEST_F(LoadSegmentation, ABadLineNamesFileAndLine) {
  std::ofstream(file_) << R"({"document": "First part. Second part.", "summary": "x"})" << "\n"
                       << R"({"document": 3, "summary": "x"})" << "\n";
  const std::string message = error_of([&] { load_segmentation_examples(file_, tokenizer_, {}, false); });
  EXPECT_NE(message.find(file_.string() + ":2"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
