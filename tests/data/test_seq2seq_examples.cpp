#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
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

// data.lead_section: the named top-level section is read first (after the root's own text),
// before the cut, so a head cut keeps it; an unknown heading leaves the document order.
TEST(Seq2SeqExample, ALeadSectionIsReadFirstAndSurvivesTheCut) {
  const WordTokenizer tokenizer;
  const Document document = three_part_document();
  const Layout full = make_layout(document, tokenizer);
  TruncationOptions options;
  options.max_source_tokens = 13;
  options.lead_section = "b";
  const Layout source = make_seq2seq_example(document, tokenizer, options).source;
  std::vector<std::size_t> kept{0, 1, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
  ASSERT_EQ(source.size(), kept.size() + 1);
  for (std::size_t p = 0; p < kept.size(); ++p) EXPECT_EQ(source.token[p], full.token[kept[p]]) << p;
  EXPECT_EQ(source.tree.heading, (std::vector<std::string>{"title", "B", "A"}));
  EXPECT_EQ(source.section[2], 1);

  options.lead_section = "NOTES";
  EXPECT_EQ(make_seq2seq_example(document, tokenizer, options).source.token,
            make_seq2seq_example(document, tokenizer, {.max_source_tokens = 13}).source.token);
  EXPECT_EQ(with_section_first(document, "A").root.children[0].heading, "A");
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

// Section tokens (seed 001 §5.2, SECTOK and LVLSECTOK).

// WordTokenizer with the structural markers [SEC], [SEC-L1]..[SEC-L<levels>], [L↑], [L↓], [L-].
class MarkerWordTokenizer : public WordTokenizer {
 public:
  explicit MarkerWordTokenizer(int levels) {
    specials_.structural = SpecialTokens::default_structural(levels);
    for (const std::string& marker : specials_.structural) encode(marker);
  }
  const SpecialTokens& specials() const override { return specials_; }

 private:
  SpecialTokens specials_ = WordTokenizer().specials();
};

// Sections (tree index: depth, tokens): 0 root: 0, 2; 1 A: 1, 3; 2 A.B: 2, 4; 3 A.B.C: 3, 2;
// 4 D: 1, 3; 5 E: 1, none; 6 E.F: 2, 2. 16 tokens; 5 sections below the root have text.
Document nested_document() {
  DocumentBuilder b("title");
  b.add_paragraph("r1 r2.");
  b.open_section("A", 1);
  b.add_paragraph("a1 a2 a3.");
  b.open_section("B", 2);
  b.add_paragraph("b1 b2 b3 b4.");
  b.open_section("C", 3);
  b.add_paragraph("c1 c2.");
  b.open_section("D", 1);
  b.add_paragraph("d1 d2 d3.");
  b.open_section("E", 1);
  b.open_section("F", 2);
  b.add_paragraph("f1 f2.");
  Document document = b.finish();
  document.id = "nested";
  document.summary = "s1 s2.";
  return document;
}

std::vector<std::string> pieces_of(const Layout& layout, const Tokenizer& tokenizer) {
  std::vector<std::string> pieces;
  for (std::int32_t id : layout.token) pieces.push_back(tokenizer.id_to_piece(id));
  return pieces;
}

Layout source_with(SectionTokens tokens, TruncationPolicy policy, std::size_t max_source_tokens,
                   const Tokenizer& tokenizer, int segments = 1) {
  TruncationOptions options;
  options.section_tokens = tokens;
  options.policy = policy;
  options.max_source_tokens = max_source_tokens;
  options.segments = segments;
  return make_seq2seq_example(nested_document(), tokenizer, options).source;
}

using Pieces = std::vector<std::string>;

Pieces source_pieces(SectionTokens tokens, TruncationPolicy policy, std::size_t max_source_tokens,
                     const Tokenizer& tokenizer) {
  return pieces_of(source_with(tokens, policy, max_source_tokens, tokenizer), tokenizer);
}

TEST(SectionTokens, SectokPutsSecBeforeEverySectionWithText) {
  const MarkerWordTokenizer tokenizer(2);
  const Layout source =
      source_with(SectionTokens::Flat, TruncationPolicy::Head, 64, tokenizer, /*segments=*/3);
  EXPECT_EQ(pieces_of(source, tokenizer),
            (Pieces{"r1", "r2.", "[SEC]", "a1", "a2", "a3.", "[SEC]", "b1", "b2", "b3", "b4.",
                    "[SEC]", "c1", "c2.", "[SEC]", "d1", "d2", "d3.", "[SEC]", "f1", "f2.",
                    "</s>"}));  // E has no text of its own: no marker
  EXPECT_EQ(source.section,
            (std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2,  //
                                       3, 3, 3, 4, 4, 4, 4, 6, 6, 6, 0}));
  const Layout full = make_layout(nested_document(), tokenizer);
  const std::int32_t sec = *tokenizer.piece_to_id("[SEC]");
  for (std::size_t p = 0, text = 0; p < source.size(); ++p) {
    EXPECT_EQ(source.position[p], static_cast<std::int32_t>(p));
    EXPECT_EQ(source.segment[p], even_segment(p, source.size(), 3));
    const bool special = source.token[p] == sec || p + 1 == source.size();
    if (special) {
      EXPECT_EQ(source.paragraph[p], -1) << p;
      EXPECT_EQ(source.sentence[p], -1) << p;
      continue;
    }
    EXPECT_EQ(source.token[p], full.token[text]);
    EXPECT_EQ(source.paragraph[p], full.paragraph[text]);
    EXPECT_EQ(source.sentence[p], full.sentence[text++]);
  }
  EXPECT_EQ(source.tree.depth, full.tree.depth);
}

TEST(SectionTokens, LvlsectokUsesTheSectionsDepthClampedToTheDeepestMarker) {
  const MarkerWordTokenizer tokenizer(2);  // [SEC-L1], [SEC-L2]: C at depth 3 gets [SEC-L2]
  const Layout source = source_with(SectionTokens::Level, TruncationPolicy::Head, 64, tokenizer);
  EXPECT_EQ(pieces_of(source, tokenizer),
            (Pieces{"r1", "r2.", "[SEC-L1]", "a1", "a2", "a3.", "[SEC-L2]", "b1", "b2", "b3",
                    "b4.", "[SEC-L2]", "c1", "c2.", "[SEC-L1]", "d1", "d2", "d3.", "[SEC-L2]",
                    "f1", "f2.", "</s>"}));
  const MarkerWordTokenizer deep(4);
  const Layout unclamped = source_with(SectionTokens::Level, TruncationPolicy::Head, 64, deep);
  EXPECT_EQ(deep.id_to_piece(unclamped.token[11]), "[SEC-L3]");
  EXPECT_EQ(unclamped.section[11], 3);
}

TEST(SectionTokens, SectionLeadSetsTheMarkersRoomAsideBeforeSharingTheBudget) {
  const MarkerWordTokenizer tokenizer(2);
  // 15 slots: 5 markers, 10 text tokens shared as 2, 2, 2, 2, 1, 1 (the remainder goes first).
  EXPECT_EQ(source_pieces(SectionTokens::Level, TruncationPolicy::SectionLead, 16, tokenizer),
            (Pieces{"r1", "r2.", "[SEC-L1]", "a1", "a2", "[SEC-L2]", "b1", "b2", "[SEC-L2]", "c1",
                    "c2.", "[SEC-L1]", "d1", "[SEC-L2]", "f1", "</s>"}));
  // 5 slots: a marker and a token each for A and B after the root's token; C and later are
  // left out whole, marker and text.
  EXPECT_EQ(source_pieces(SectionTokens::Flat, TruncationPolicy::SectionLead, 6, tokenizer),
            (Pieces{"r1", "[SEC]", "a1", "[SEC]", "b1", "</s>"}));
  EXPECT_EQ(source_pieces(SectionTokens::Flat, TruncationPolicy::SectionLead, 4, tokenizer),
            (Pieces{"r1", "[SEC]", "a1", "</s>"}));
  // 2 slots: A's marker would come without text, so the root's second token takes the slot.
  EXPECT_EQ(source_pieces(SectionTokens::Flat, TruncationPolicy::SectionLead, 3, tokenizer),
            (Pieces{"r1", "r2.", "</s>"}));
}

TEST(SectionTokens, HeadKeepsAMarkerOnlyWithTextAfterIt) {
  const MarkerWordTokenizer tokenizer(2);
  EXPECT_EQ(source_pieces(SectionTokens::Flat, TruncationPolicy::Head, 6, tokenizer),
            (Pieces{"r1", "r2.", "[SEC]", "a1", "a2", "</s>"}));
  // One slot left at A's start: [SEC] a1 does not fit, so the slot stays empty.
  EXPECT_EQ(source_pieces(SectionTokens::Flat, TruncationPolicy::Head, 4, tokenizer),
            (Pieces{"r1", "r2.", "</s>"}));
}

// Every budget, both policies, both kinds: the source never exceeds the budget, every marker
// is followed by its section's first token, every section's kept text is its lead, and every
// section below the root that keeps text has exactly one marker.
TEST(SectionTokens, EveryBudgetIsRespectedAndEveryMarkerHasText) {
  const MarkerWordTokenizer tokenizer(2);
  const Layout full = make_layout(nested_document(), tokenizer);
  const std::size_t whole = full.size() + 5 + 1;
  for (SectionTokens tokens : {SectionTokens::Flat, SectionTokens::Level}) {
    for (TruncationPolicy policy : {TruncationPolicy::Head, TruncationPolicy::SectionLead}) {
      for (std::size_t max = 2; max <= whole + 2; ++max) {
        SCOPED_TRACE(fmt::format("{} {} {}", section_tokens_name(tokens),
                                 truncation_policy_name(policy), max));
        const Layout source = source_with(tokens, policy, max, tokenizer);
        EXPECT_LE(source.size(), max);
        // SectionLead fills the budget here; Head may leave one slot where a marker would not fit.
        const std::size_t at_least = policy == TruncationPolicy::SectionLead ? max : max - 1;
        EXPECT_GE(source.size(), std::min(whole, at_least));
        std::vector<std::size_t> kept(full.tree.size()), markers(full.tree.size());
        std::vector<std::size_t> first(full.tree.size(), full.size());
        for (std::size_t i = full.size(); i-- > 0;) first[full.section[i]] = i;
        for (std::size_t p = 0; p + 1 < source.size(); ++p) {
          const std::size_t s = static_cast<std::size_t>(source.section[p]);
          if (source.sentence[p] < 0) {
            ++markers[s];
            ASSERT_LT(p + 2, source.size());
            EXPECT_EQ(source.section[p + 1], source.section[p]);
            EXPECT_GE(source.sentence[p + 1], 0);
            continue;
          }
          EXPECT_EQ(source.token[p], full.token[first[s] + kept[s]++]);
        }
        for (std::size_t s = 0; s < kept.size(); ++s)
          EXPECT_EQ(markers[s], s > 0 && kept[s] > 0 ? 1u : 0u) << s;
      }
    }
  }
}

TEST(SectionTokens, NoneLeavesTheSourceAsBefore) {
  const MarkerWordTokenizer tokenizer(2);
  const Layout full = make_layout(nested_document(), tokenizer);
  const Layout source = source_with(SectionTokens::None, TruncationPolicy::Head, 64, tokenizer);
  std::vector<std::int32_t> tokens = full.token;
  tokens.push_back(*tokenizer.eos_id());
  EXPECT_EQ(source.token, tokens);
}

TEST(SectionTokens, ATokenizerWithoutTheMarkersIsAnError) {
  const WordTokenizer plain;
  const std::string flat = error_of(
      [&] { source_with(SectionTokens::Flat, TruncationPolicy::Head, 64, plain); });
  EXPECT_NE(flat.find("[SEC] token"), std::string::npos) << flat;
  EXPECT_NE(flat.find("structural markers"), std::string::npos) << flat;
  EXPECT_NE(flat.find("--structural-levels"), std::string::npos) << flat;
  const MarkerWordTokenizer no_levels(0);  // [SEC] but no [SEC-L1]
  EXPECT_NO_THROW(source_with(SectionTokens::Flat, TruncationPolicy::Head, 64, no_levels));
  const std::string level = error_of(
      [&] { source_with(SectionTokens::Level, TruncationPolicy::SectionLead, 64, no_levels); });
  EXPECT_NE(level.find("[SEC-L1] token"), std::string::npos) << level;
  EXPECT_NE(level.find("lvlsectok"), std::string::npos) << level;
  EXPECT_NO_THROW(source_with(SectionTokens::None, TruncationPolicy::Head, 64, plain));
}

TEST(SectionTokens, ParsesNamesAndListsThemOnError) {
  EXPECT_EQ(section_tokens_from_name("none"), SectionTokens::None);
  EXPECT_EQ(section_tokens_from_name("sectok"), SectionTokens::Flat);
  EXPECT_EQ(section_tokens_from_name("lvlsectok"), SectionTokens::Level);
  EXPECT_STREQ(section_tokens_name(SectionTokens::Level), "lvlsectok");
  EXPECT_STREQ(section_tokens_name(SectionTokens::Flat), "sectok");
  EXPECT_STREQ(section_tokens_name(SectionTokens::None), "none");
  const std::string message = error_of([] { section_tokens_from_name("sec"); });
  EXPECT_NE(message.find("'sec'"), std::string::npos);
  EXPECT_NE(message.find("none, sectok, lvlsectok"), std::string::npos);
}

TEST_F(LoadSeq2Seq, LevelMarkersPastTheDeepestAreCounted) {
  SpecialTokens specials;
  specials.structural = SpecialTokens::default_structural(1);
  const auto tokenizer = ByteBpeTokenizer::train(test::generated_sentences(200), 300, specials);
  const nlohmann::json deep_section = {{"heading", "Deep"}, {"paragraphs", {"The model reads."}}};
  const nlohmann::json middle = {{"heading", "Middle"},
                                 {"paragraphs", {"Each section follows."}},
                                 {"sections", {deep_section, deep_section}}};
  write({{{"paragraphs", {"Long documents."}}, {"sections", {middle}}, {"summary", "x"}},
         {{"paragraphs", {"Long documents."}}, {"summary", "x"}}});
  TruncationOptions options;
  options.section_tokens = SectionTokens::Level;
  Seq2SeqLoadStats stats;
  const std::vector<Seq2SeqExample> examples =
      load_seq2seq_examples(file_, *tokenizer, options, false, &stats);
  EXPECT_EQ(stats.section_levels_clamped, 2u);  // the two depth-2 sections got [SEC-L1]
  const std::int32_t level1 = *tokenizer->piece_to_id("[SEC-L1]");
  const std::vector<std::int32_t>& first = examples[0].source.token;
  const std::vector<std::int32_t>& second = examples[1].source.token;
  EXPECT_EQ(std::count(first.begin(), first.end(), level1), 3);
  EXPECT_EQ(std::count(second.begin(), second.end(), level1), 0);  // no sections, no markers

  options.section_tokens = SectionTokens::Flat;
  load_seq2seq_examples(file_, *tokenizer, options, false, &stats);
  EXPECT_EQ(stats.section_levels_clamped, 0u);
  options.section_tokens = SectionTokens::Level;
  // The fixture's tokenizer has no structural markers.
  const std::string message =
      error_of([&] { load_seq2seq_examples(file_, *tokenizer_, options, false); });
  EXPECT_NE(message.find("[SEC-L1]"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
