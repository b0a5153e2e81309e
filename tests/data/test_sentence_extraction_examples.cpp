// The extractors' examples: caps on sentences and tokens, the oracle over the kept sentences,
// and the documents left out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/data/sentence_extraction_examples.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

Document manual(std::string summary) {
  DocumentBuilder b("tool(1)");
  b.add_paragraph("Tool lists files. Tool copies files between hosts quickly. Errors go to stderr.");
  Document d = b.finish();
  d.id = "tool";
  d.summary = std::move(summary);
  return d;
}

TEST(SentenceExtractionExamples, CapsSentencesAndTokensAndLabelsTheKeptOnes) {
  test_support::WordTokenizer words;
  SentenceExtractionOptions options;
  options.max_sentences = 2;
  options.max_sentence_tokens = 3;
  const auto e = make_sentence_extraction_example(manual("copies files between hosts"), words, options);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->id, "tool");
  ASSERT_EQ(e->sentences.size(), 2u);
  EXPECT_EQ(e->sentences[1], "Tool copies files between hosts quickly.");
  EXPECT_EQ(e->sentence_ids[1].size(), 3u);  // cut to max_sentence_tokens
  EXPECT_EQ(words.decode(e->sentence_ids[1]), "Tool copies files");
  // One summary sentence: its two closest kept sentences, the better first.
  EXPECT_EQ(e->oracle, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(e->oracle_membership(), (std::vector<float>{1, 1}));
  EXPECT_EQ(e->summary_sentences, 1u);
  EXPECT_EQ(e->tokens(), 6u);
}

TEST(SentenceExtractionExamples, NoSummaryOrNoSentenceIsNoExample) {
  test_support::WordTokenizer words;
  EXPECT_FALSE(make_sentence_extraction_example(manual(""), words, {}).has_value());
  Document empty = DocumentBuilder("empty").finish();
  empty.summary = "anything";
  EXPECT_FALSE(make_sentence_extraction_example(empty, words, {}).has_value());
  SentenceExtractionOptions zero;
  zero.max_sentences = 0;
  EXPECT_THROW(make_sentence_extraction_example(manual("x"), words, zero), Error);
}

TEST(SentenceExtractionExamples, MeanSummaryLengthRoundsAndIsAtLeastOne) {
  std::vector<SentenceExtractionExample> examples(3);
  examples[0].summary_sentences = 1;
  examples[1].summary_sentences = 2;
  examples[2].summary_sentences = 4;
  EXPECT_EQ(mean_summary_sentences(examples), 2u);  // 7 / 3 = 2.33
  EXPECT_EQ(mean_summary_sentences({}), 1u);
}

}  // namespace
}  // namespace strata
