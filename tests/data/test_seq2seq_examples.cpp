#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/doc/dataset.h"
#include "strata/text/byte_bpe.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"
#include "text/text_test_util.h"

namespace strata {
namespace {

using test_support::error_of;
using test_support::WordTokenizer;

// Root: 2 tokens; section A: 10 tokens; section B: 10 tokens in two sentences.
Document three_part_document() {
  DocumentBuilder b("title");
  b.add_paragraph("r1 r2.");
  b.open_section("A", 1);
  b.add_paragraph("a1 a2 a3 a4 a5 a6 a7 a8 a9 a10.");
  b.open_section("B", 1);
  b.add_paragraph("B1 b2 b3 b4 b5. B6 b7 b8 b9 b10.");
  Document document = b.finish();
  document.id = "doc";
  document.summary = "s1 s2 s3 s4 s5.";
  return document;
}

class NoEosTokenizer : public WordTokenizer {
 public:
  NoEosTokenizer() { specials_.eos.clear(); }
  const SpecialTokens& specials() const override { return specials_; }

 private:
  SpecialTokens specials_ = WordTokenizer().specials();
};

TEST(Seq2SeqExample, SourceEndsWithEosTargetIsSummaryAndEos) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();
  const Seq2SeqExample example = make_seq2seq_example(document, tokenizer, {});
  const Layout full = make_layout(document, tokenizer);
  const std::int32_t eos = *tokenizer.eos_id();

  EXPECT_EQ(example.id, "doc");
  ASSERT_EQ(example.source.size(), full.size() + 1);  // no bos
  EXPECT_EQ(example.source.token.back(), eos);
  EXPECT_EQ(example.source.sentence.back(), -1);
  std::vector<std::int32_t> target = tokenizer.encode(document.summary);
  target.push_back(eos);
  EXPECT_EQ(example.target, target);
  EXPECT_EQ(example.reference, document.summary);
}

TEST(Seq2SeqExample, HeadKeepsTheFirstTokensAndRecomputesPositionsAndSegments) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();
  const Layout full = make_layout(document, tokenizer);
  TruncationOptions options;
  options.max_source_tokens = 8;
  options.segments = 3;
  const Layout source = make_seq2seq_example(document, tokenizer, options).source;

  ASSERT_EQ(source.size(), 8u);
  for (std::size_t p = 0; p < 7; ++p) {
    EXPECT_EQ(source.token[p], full.token[p]);
    EXPECT_EQ(source.section[p], full.section[p]);
    EXPECT_EQ(source.sentence[p], full.sentence[p]);
  }
  EXPECT_EQ(source.token[7], *tokenizer.eos_id());
  for (std::size_t p = 0; p < 8; ++p) {
    EXPECT_EQ(source.position[p], static_cast<std::int32_t>(p));
    EXPECT_EQ(source.segment[p], even_segment(p, 8, 3));
  }
  EXPECT_EQ(source.segment.back(), 2);
}

TEST(Seq2SeqExample, ASourceThatFitsExactlyIsWhole) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();  // 22 tokens
  for (TruncationPolicy policy : {TruncationPolicy::Head, TruncationPolicy::SectionLead}) {
    TruncationOptions options;
    options.policy = policy;
    options.max_source_tokens = 23;
    EXPECT_EQ(make_seq2seq_example(document, tokenizer, options).source.size(), 23u);
    options.max_source_tokens = 22;
    EXPECT_EQ(make_seq2seq_example(document, tokenizer, options).source.size(), 22u);
  }
}

TEST(Seq2SeqExample, TargetIsTruncatedWithEosKeptLast) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();
  TruncationOptions options;
  options.max_target_tokens = 4;
  const Seq2SeqExample example = make_seq2seq_example(document, tokenizer, options);
  const std::vector<std::int32_t> summary = tokenizer.encode(document.summary);
  EXPECT_EQ(example.target, (std::vector<std::int32_t>{summary[0], summary[1], summary[2],
                                                       *tokenizer.eos_id()}));
  EXPECT_EQ(example.reference, document.summary);  // the text stays whole for ROUGE
}

TEST(Seq2SeqExample, SectionLeadSharesTheBudgetAmongSections) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();
  const Layout full = make_layout(document, tokenizer);
  TruncationOptions options;
  options.policy = TruncationPolicy::SectionLead;
  options.max_source_tokens = 13;  // 12 for text: root keeps 2, A and B 5 each
  options.segments = 2;
  const Layout source = make_seq2seq_example(document, tokenizer, options).source;

  std::vector<std::size_t> kept{0, 1, 2, 3, 4, 5, 6, 12, 13, 14, 15, 16};
  ASSERT_EQ(source.size(), kept.size() + 1);
  for (std::size_t p = 0; p < kept.size(); ++p) {
    EXPECT_EQ(source.token[p], full.token[kept[p]]) << p;
    EXPECT_EQ(source.section[p], full.section[kept[p]]);
    EXPECT_EQ(source.paragraph[p], full.paragraph[kept[p]]);
    EXPECT_EQ(source.sentence[p], full.sentence[kept[p]]);
    EXPECT_EQ(source.position[p], static_cast<std::int32_t>(p));
    EXPECT_EQ(source.segment[p], even_segment(p, 13, 2));
  }
  EXPECT_EQ(source.section, (std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 0}));
  EXPECT_EQ(source.tree.heading, full.tree.heading);

  options.policy = TruncationPolicy::Head;  // Head never reaches B
  const Layout head = make_seq2seq_example(document, tokenizer, options).source;
  EXPECT_EQ(std::count(head.section.begin(), head.section.end(), 2), 0);
}

TEST(ShareBudget, WaterFillsFromShortSectionsToLongOnes) {
  using V = std::vector<std::size_t>;
  EXPECT_EQ(share_budget(V{2, 10, 10}, 12), (V{2, 5, 5}));
  EXPECT_EQ(share_budget(V{0, 3, 3}, 4), (V{0, 2, 2}));      // empty sections take no share
  EXPECT_EQ(share_budget(V{10, 10, 10}, 10), (V{4, 3, 3}));  // the remainder goes first
  EXPECT_EQ(share_budget(V{3, 10, 1, 8}, 12), (V{3, 4, 1, 4}));
  EXPECT_EQ(share_budget(V{5, 5, 5}, 2), (V{1, 1, 0}));
  EXPECT_EQ(share_budget(V{1, 2, 3}, 10), (V{1, 2, 3}));
  EXPECT_EQ(share_budget(V{}, 10), V{});
}

TEST(ShareBudget, UsesTheWholeBudgetAndNeverMoreThanASectionHas) {
  std::vector<std::size_t> lengths;
  for (std::size_t i = 0; i < 40; ++i) lengths.push_back((i * 37) % 23);
  for (std::size_t budget : {0u, 1u, 7u, 100u, 300u, 1000u}) {
    const std::vector<std::size_t> share = share_budget(lengths, budget);
    std::size_t total = 0, all = 0;
    for (std::size_t s = 0; s < lengths.size(); ++s) {
      EXPECT_LE(share[s], lengths[s]);
      total += share[s];
      all += lengths[s];
    }
    EXPECT_EQ(total, std::min(budget, all));
  }
}

TEST(Seq2SeqExample, NeedsEosAndRoomForText) {
  const NoEosTokenizer no_eos;
  EXPECT_NE(error_of([&] { make_seq2seq_example(three_part_document(), no_eos, {}); })
                .find("eos"),
            std::string::npos);
  const WordTokenizer tokenizer;
  TruncationOptions options;
  options.max_source_tokens = 1;
  EXPECT_THROW(make_seq2seq_example(three_part_document(), tokenizer, options), Error);
  options = {};
  options.max_target_tokens = 1;
  EXPECT_THROW(make_seq2seq_example(three_part_document(), tokenizer, options), Error);
}

TEST(TruncationPolicy, ParsesNamesAndListsThemOnError) {
  EXPECT_EQ(truncation_policy_from_name("head"), TruncationPolicy::Head);
  EXPECT_EQ(truncation_policy_from_name("section_lead"), TruncationPolicy::SectionLead);
  EXPECT_STREQ(truncation_policy_name(TruncationPolicy::SectionLead), "section_lead");
  const std::string message = error_of([] { truncation_policy_from_name("tail"); });
  EXPECT_NE(message.find("'tail'"), std::string::npos);
  EXPECT_NE(message.find("head, section_lead"), std::string::npos);
}

class LoadSeq2Seq : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokenizer_ = ByteBpeTokenizer::train(test::generated_sentences(400), 400, SpecialTokens{}).release();
  }
  static void TearDownTestSuite() { delete tokenizer_; }
  void write(const std::vector<nlohmann::json>& lines) {
    std::ofstream out(file_);
    for (const auto& line : lines) out << line.dump() << "\n";
  }

  static const ByteBpeTokenizer* tokenizer_;
  test::TempDir dir_{"seq2seq"};
  std::filesystem::path file_ = dir_ / "data.jsonl";
};
const ByteBpeTokenizer* LoadSeq2Seq::tokenizer_ = nullptr;

// Documents of varied sizes and shapes, a few unusable.
std::vector<nlohmann::json> mixed_dataset(std::size_t n) {
  const std::vector<std::string> sentences = test::generated_sentences(static_cast<int>(n) * 3);
  std::vector<nlohmann::json> lines;
  for (std::size_t i = 0; i < n; ++i) {
    std::string body;
    for (std::size_t k = 0; k <= i % 40; ++k) body += sentences[(i + k) % sentences.size()] + " ";
    const std::string summary = i % 50 == 7 ? "" : sentences[i];
    if (i % 3 == 0) {
      lines.push_back({{"id", i}, {"document", i % 50 == 11 ? "" : body}, {"summary", summary}});
    } else {
      lines.push_back({{"id", i},
                       {"paragraphs", {sentences[i]}},
                       {"sections", {{{"heading", "Body"}, {"paragraphs", {body}}},
                                     {{"heading", "End"}, {"paragraphs", {sentences[n + i]}}}}},
                       {"summary", summary}});
    }
  }
  return lines;
}

TEST_F(LoadSeq2Seq, KeepsFileOrderSkipsUnusableAndCountsTruncation) {
  const std::vector<nlohmann::json> lines = mixed_dataset(300);
  write(lines);
  TruncationOptions options;
  options.max_source_tokens = 96;
  options.max_target_tokens = 12;
  options.policy = TruncationPolicy::SectionLead;
  Seq2SeqLoadStats stats;
  const std::vector<Seq2SeqExample> examples =
      load_seq2seq_examples(file_, *tokenizer_, options, false, &stats);

  // Serially, one document at a time: the parallel result must be identical.
  DatasetReader reader(file_);
  Document document;
  std::size_t k = 0, sources_truncated = 0, targets_truncated = 0, skipped = 0;
  while (reader.next(document)) {
    if (document.empty() || document.summary.empty()) {
      ++skipped;
      continue;
    }
    const Seq2SeqExample expected = make_seq2seq_example(document, *tokenizer_, options);
    ASSERT_LT(k, examples.size());
    const Seq2SeqExample& got = examples[k++];
    EXPECT_EQ(got.id, expected.id);
    EXPECT_EQ(got.source.token, expected.source.token);
    EXPECT_EQ(got.source.sentence, expected.source.sentence);
    EXPECT_EQ(got.source.segment, expected.source.segment);
    EXPECT_EQ(got.target, expected.target);
    EXPECT_EQ(got.reference, expected.reference);
    sources_truncated += make_layout(document, *tokenizer_).size() > 95;
    targets_truncated += tokenizer_->encode(document.summary).size() > 11;
  }
  EXPECT_EQ(k, examples.size());
  EXPECT_EQ(skipped, 6u + 2u);  // i % 50 == 7 (no summary), i % 50 == 11 with i % 3 == 0
  EXPECT_EQ(stats.documents, 300u);
  EXPECT_EQ(stats.skipped, skipped);
  EXPECT_EQ(stats.sources_truncated, sources_truncated);
  EXPECT_EQ(stats.targets_truncated, targets_truncated);
  EXPECT_GT(sources_truncated, 0u);
  EXPECT_LT(sources_truncated, examples.size());
  for (const Seq2SeqExample& example : examples) {
    EXPECT_LE(example.source.size(), 96u);
    EXPECT_LE(example.target.size(), 12u);
    EXPECT_EQ(example.source.token.back(), *tokenizer_->eos_id());
    EXPECT_EQ(example.target.back(), *tokenizer_->eos_id());
  }

  const std::vector<std::size_t> costs = seq2seq_costs(examples);
  EXPECT_EQ(costs[0], examples[0].source.size() + examples[0].target.size());
}

TEST_F(LoadSeq2Seq, ABadLineNamesFileAndLine) {
  std::ofstream(file_) << R"({"document": "a b.", "summary": "a."})" << "\n"
                       << R"({"document": 3, "summary": "a."})" << "\n";
  const std::string message =
      error_of([&] { load_seq2seq_examples(file_, *tokenizer_, {}, false); });
  EXPECT_NE(message.find(file_.string() + ":2"), std::string::npos) << message;
  EXPECT_NE(message.find("document"), std::string::npos) << message;
}

TEST_F(LoadSeq2Seq, NothingUsableIsAnErrorNamingTheFile) {
  write({{{"document", "Some text here."}, {"summary", ""}}, {{"document", ""}, {"summary", "x"}}});
  const std::string message =
      error_of([&] { load_seq2seq_examples(file_, *tokenizer_, {}, false); });
  EXPECT_NE(message.find(file_.string()), std::string::npos) << message;
  EXPECT_NE(message.find("no document has both"), std::string::npos) << message;
  std::ofstream(file_).close();
  EXPECT_NE(error_of([&] { load_seq2seq_examples(file_, *tokenizer_, {}, false); }).find("no documents"),
            std::string::npos);
}

TEST_F(LoadSeq2Seq, ATokenizerWithoutEosIsAnError) {
  write({{{"document", "Some text here."}, {"summary", "x"}}});
  const NoEosTokenizer no_eos;
  EXPECT_THROW(load_seq2seq_examples(file_, no_eos, {}, false), Error);
}

}  // namespace
}  // namespace strata
