#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/data/extractive_examples.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"
#include "text/text_test_util.h"

namespace strata {
namespace {

using test_support::error_of;
using test_support::SepWordTokenizer;
using test_support::WordTokenizer;

// Root: one sentence; section A: two sentences in one paragraph, one in the next.
Document two_section_document() {
  DocumentBuilder b("title");
  b.add_paragraph("r1 r2.");
  b.open_section("A", 1);
  b.add_paragraph("a1 a2 a3. b1 b2.");
  b.add_paragraph("c1 c2 c3 c4.");
  Document document = b.finish();
  document.id = "doc";
  document.summary = "b1 b2.";
  return document;
}

std::vector<std::int32_t> ids_of(const Tokenizer& tokenizer, std::initializer_list<const char*> words) {
  std::vector<std::int32_t> ids;
  for (const char* word : words) ids.push_back(tokenizer.encode(word).at(0));
  return ids;
}

TEST(ExtractiveExample, WrapsEverySentenceInClsAndSepWithItsStructure) {
  const SepWordTokenizer tokenizer;
  const auto example = make_extractive_example(two_section_document(), tokenizer, {});
  ASSERT_TRUE(example.has_value());
  EXPECT_EQ(example->id, "doc");
  EXPECT_EQ(example->ids, ids_of(tokenizer, {"<s>", "r1", "r2.", "[SEP]", "<s>", "a1", "a2", "a3.", "[SEP]", "<s>",
                                             "b1", "b2.", "[SEP]", "<s>", "c1", "c2", "c3", "c4.", "[SEP]"}));
  const Layout& l = example->layout;
  EXPECT_EQ(l.token, example->ids);
  EXPECT_EQ(l.sentence, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(l.section, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(l.paragraph, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(l.segment, std::vector<std::int32_t>(19, 0));
  for (std::size_t p = 0; p < l.size(); ++p) EXPECT_EQ(l.position[p], static_cast<std::int32_t>(p));
  EXPECT_EQ(l.tree.size(), 2);
  EXPECT_EQ(example->sentences, (std::vector<std::string>{"r1 r2.", "a1 a2 a3.", "b1 b2.", "c1 c2 c3 c4."}));
  EXPECT_EQ(example->labels, (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(example->reference, "b1 b2.");
}

TEST(ExtractiveExample, TruncatesAtASentenceEnd) {
  const SepWordTokenizer tokenizer;
  ExtractiveOptions options;
  options.max_tokens = 12;  // 4 + 5 fit, the third sentence (4 tokens) does not
  const auto example = make_extractive_example(two_section_document(), tokenizer, options);
  ASSERT_TRUE(example.has_value());
  EXPECT_EQ(example->ids.size(), 9u);
  EXPECT_EQ(example->ids.back(), *tokenizer.sep_id());
  EXPECT_EQ(example->sentences.size(), 2u);
  EXPECT_EQ(example->labels.size(), 2u);
  EXPECT_EQ(example->layout.size(), 9u);

  options.max_tokens = 13;  // exactly three sentences
  EXPECT_EQ(make_extractive_example(two_section_document(), tokenizer, options)->sentences.size(), 3u);
}

TEST(ExtractiveExample, AFirstSentenceLongerThanTheBudgetIsCutInside) {
  const SepWordTokenizer tokenizer;
  Document document = two_section_document();
  ExtractiveOptions options;
  options.max_tokens = 3;
  const auto example = make_extractive_example(document, tokenizer, options);
  ASSERT_TRUE(example.has_value());
  EXPECT_EQ(example->ids, ids_of(tokenizer, {"<s>", "r1", "[SEP]"}));
  EXPECT_EQ(example->sentences, std::vector<std::string>{"r1 r2."});
  options.max_tokens = 2;
  EXPECT_NE(error_of([&] { make_extractive_example(document, tokenizer, options); }).find("max_tokens"),
            std::string::npos);
}

TEST(ExtractiveExample, ASepInsideTheTextIsDroppedSoEachSentenceHasOneMarker) {
  const SepWordTokenizer tokenizer;
  DocumentBuilder b;
  b.add_paragraph("x [SEP] y.");
  Document document = b.finish();
  document.summary = "y.";
  EXPECT_EQ(make_extractive_example(document, tokenizer, {})->ids, ids_of(tokenizer, {"<s>", "x", "y.", "[SEP]"}));
}

TEST(ExtractiveExample, NoSummaryOrNoSentenceGivesNothing) {
  const SepWordTokenizer tokenizer;
  Document document = two_section_document();
  document.summary = "  ";
  EXPECT_FALSE(make_extractive_example(document, tokenizer, {}).has_value());
  Document empty;
  empty.summary = "x";
  EXPECT_FALSE(make_extractive_example(empty, tokenizer, {}).has_value());
}

TEST(ExtractiveExample, ATokenizerWithoutSepIsAnError) {
  const WordTokenizer tokenizer;  // no sep token
  const std::string message = error_of([&] { make_extractive_example(two_section_document(), tokenizer, {}); });
  EXPECT_NE(message.find("sep token"), std::string::npos) << message;
  EXPECT_NE(message.find("test-words"), std::string::npos) << message;
}

TEST(OracleLabels, PicksTheObviousSentenceAndStopsWhenNothingHelps) {
  const std::vector<std::string> sentences{"dogs bark loudly at night", "the cat sat on the mat",
                                           "a cat sat on a red mat today", "stocks fell sharply"};
  // The second sentence is the reference; any addition lowers precision more than it helps.
  EXPECT_EQ(oracle_labels(sentences, "The cat sat on the mat.", 3), (std::vector<int>{0, 1, 0, 0}));
  // Two sentences carry the reference: both are chosen, in two greedy rounds.
  EXPECT_EQ(oracle_labels(sentences, "The cat sat on the mat. Stocks fell sharply.", 3),
            (std::vector<int>{0, 1, 0, 1}));
  // ... unless one sentence is all the oracle may choose: the larger gain comes first.
  EXPECT_EQ(oracle_labels(sentences, "The cat sat on the mat. Stocks fell sharply.", 1),
            (std::vector<int>{0, 1, 0, 0}));
  // Nothing overlaps: nothing is chosen.
  EXPECT_EQ(oracle_labels(sentences, "Unrelated words entirely.", 3), (std::vector<int>{0, 0, 0, 0}));
}

TEST(SelectSentences, TopKByScoreInDocumentOrder) {
  const std::vector<std::string> sentences{"one two three", "four five six", "seven eight nine", "ten eleven"};
  const std::vector<float> scores{0.1f, 0.9f, 0.8f, 0.5f};
  EXPECT_EQ(select_sentences(scores, sentences, 2, false), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(select_sentences(scores, sentences, 10, false), (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(select_sentences(scores, sentences, 0, false).empty());
  const std::vector<float> ties{0.5f, 0.5f, 0.5f, 0.5f};
  EXPECT_EQ(select_sentences(ties, sentences, 2, false), (std::vector<std::size_t>{0, 1}));
  EXPECT_NE(error_of([&] { select_sentences(std::vector<float>{1.0f}, sentences, 1, false); }).find("1 scores for 4"),
            std::string::npos);
}

TEST(SelectSentences, TrigramBlockingSkipsARepeatedTrigram) {
  const std::vector<std::string> sentences{"The cat sat on the mat.", "Yesterday the cat sat down.",
                                           "Dogs bark.", "Birds sing at dawn."};
  const std::vector<float> scores{0.9f, 0.8f, 0.3f, 0.5f};
  EXPECT_EQ(select_sentences(scores, sentences, 2, false), (std::vector<std::size_t>{0, 1}));
  // "the cat sat" is in both: the second is skipped for the next best.
  EXPECT_EQ(select_sentences(scores, sentences, 2, true), (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(select_sentences(scores, sentences, 4, true), (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_EQ(join_sentences(sentences, std::vector<std::size_t>{0, 3}), "The cat sat on the mat.\nBirds sing at dawn.");
}

TEST(LoadExtractive, SkipsAndCountsDocumentsWithoutSummaryAndMatchesOneByOne) {
  const test::TempDir dir("extractive");
  const std::filesystem::path file = dir / "data.jsonl";
  const std::vector<nlohmann::json> lines{
      {{"id", "a"}, {"document", "cat sat. dogs bark."}, {"summary", "dogs bark."}},
      {{"id", "b"}, {"document", "nothing to see here."}, {"summary", ""}},
      {{"id", "c"}, {"document", "one long sentence with many words in it. short."}, {"summary", "short."}}};
  {
    std::ofstream out(file);
    for (const auto& line : lines) out << line.dump() << "\n";
  }
  SepWordTokenizer tokenizer;
  for (const auto& line : lines) tokenizer.encode(line["document"].get<std::string>());  // no new words in parallel
  ExtractiveOptions options;
  options.max_tokens = 8;
  ExtractiveLoadStats stats;
  const std::vector<ExtractiveExample> examples = load_extractive_examples(file, tokenizer, options, false, &stats);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.skipped, 1u);
  EXPECT_EQ(stats.truncated, 1u);  // "c": its first sentence alone is cut
  EXPECT_EQ(examples[0].id, "a");
  EXPECT_EQ(examples[0].labels, (std::vector<int>{0, 1}));
  EXPECT_EQ(examples[1].id, "c");
  EXPECT_EQ(examples[1].ids.size(), 8u);
  EXPECT_EQ(extractive_costs(examples), (std::vector<std::size_t>{examples[0].ids.size(), 8u}));

  std::ofstream(file) << R"({"document": "a b.", "summary": ""})" << "\n";
  const std::string message = error_of([&] { load_extractive_examples(file, tokenizer, options, false); });
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("no document has both"), std::string::npos) << message;
  std::ofstream(file) << R"({"document": 3, "summary": "a."})" << "\n";
  EXPECT_NE(error_of([&] { load_extractive_examples(file, tokenizer, options, false); }).find(file.string() + ":1"),
            std::string::npos);
}

}  // namespace
}  // namespace strata
