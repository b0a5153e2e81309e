// Question-summary hierarchies: the seed's linearisation, the robust parser on malformed
// model output, round trips on random hierarchies, the hierarchy F1 on hand-scored examples,
// and the JSONL reader's errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/qs_hierarchy.h"
#include "support/expect.h"

namespace strata {
namespace {

using test_support::error_of;

QsNode qs(std::string question, std::string summary, std::vector<QsNode> children = {}) {
  return {std::move(question), std::move(summary), std::move(children)};
}

// Figure 1 / Appendix Example 1 of seed 001: Q1 -> {Q1.1, Q1.2 -> {Q1.2.1}}.
QsHierarchy figure_one() {
  return {{qs("What incited the start of the FY2009 appropriation process?",
                "On February 4, 2008, President Bush sent his FY2009 budget to Congress.",
                {qs("How did Congress respond to this request?",
                      "The Senate passed the budget resolution."),
                 qs("What was the result of the FY2009 appropriations process?",
                      "An omnibus appropriations bill was signed into law (P.L. 111-8).",
                      {qs("How did the omnibus appropriations bill affect HUD?",
                            "It provided nearly $13.7 billion for HUD programs.")})})}};
}

TEST(QsHierarchy, QuestionsAndSummariesInDepthFirstOrder) {
  QsHierarchy h = figure_one();
  h.roots[0].question.clear();  // Task I's output: the root question is the prompt
  EXPECT_EQ(questions_text(h),
            "How did Congress respond to this request? What was the result of the FY2009 appropriations process? "
            "How did the omnibus appropriations bill affect HUD?");
  EXPECT_EQ(summaries_text(h),
            "On February 4, 2008, President Bush sent his FY2009 budget to Congress.\n"
            "The Senate passed the budget resolution.\n"
            "An omnibus appropriations bill was signed into law (P.L. 111-8).\n"
            "It provided nearly $13.7 billion for HUD programs.");
}

TEST(QsHierarchy, LinearizesFigureOneDepthFirst) {
  EXPECT_EQ(linearize(figure_one()),
            "What incited the start of the FY2009 appropriation process? On February 4, 2008, "
            "President Bush sent his FY2009 budget to Congress. "
            "[L↑] How did Congress respond to this request? The Senate passed the budget resolution. "
            "[L-] What was the result of the FY2009 appropriations process? An omnibus "
            "appropriations bill was signed into law (P.L. 111-8). "
            "[L↑] How did the omnibus appropriations bill affect HUD? It provided nearly $13.7 "
            "billion for HUD programs.");
  EXPECT_EQ(parse_hierarchy(linearize(figure_one())), figure_one());
}

TEST(QsHierarchy, ShallowerTokensRepeatOncePerLevel) {
  QsHierarchy h = figure_one();
  h.roots.push_back(qs("Q2?", "A2"));
  const std::string text = linearize(h);
  EXPECT_TRUE(text.ends_with("HUD programs. [L↓] [L↓] Q2? A2")) << text;
  EXPECT_EQ(parse_hierarchy(text), h);
}

TEST(QsHierarchy, CustomTokensAndEmptyFieldsLeftOut) {
  const QsHierarchy h{{qs("", "a1", {qs("Q?", "")}), qs("Q3?", "a3")}};
  const LevelTokens tokens{"<deeper>", "<shallower>", "<same>"};
  EXPECT_EQ(linearize(h, tokens), "a1 <deeper> Q? <shallower> Q3? a3");
  EXPECT_EQ(parse_hierarchy(linearize(h, tokens), tokens), h);
  EXPECT_EQ(linearize(QsHierarchy{}), "");
}

TEST(QsHierarchy, FlattenGivesParentsAndDepthsInDepthFirstOrder) {
  const FlatQs flat = flatten(figure_one());
  EXPECT_EQ(flat.parent, (std::vector<int>{-1, 0, 0, 2}));
  EXPECT_EQ(flat.depth, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(flat.summary[3], "It provided nearly $13.7 billion for HUD programs.");
  EXPECT_EQ(unflatten(flat), figure_one());
  EXPECT_EQ(figure_one().size(), 4u);
  EXPECT_EQ(figure_one().edges(), 3u);

  FlatQs bad = flat;
  bad.parent[1] = 3;  // a parent after its child
  EXPECT_NE(error_of([&] { unflatten(bad); }).find("pair 1 has parent 3"), std::string::npos);
}

// ---- parsing malformed output --------------------------------------------------------------

struct Parsed {
  QsHierarchy hierarchy;
  QsParseRepairs repairs;
};

Parsed parse(std::string_view text) {
  Parsed p;
  p.hierarchy = parse_hierarchy(text, {}, &p.repairs);
  return p;
}

TEST(QsHierarchyParse, LeadingTokensAreIgnored) {
  const Parsed p = parse("[L↓] [L↑] Q1? A1 [L↑] Q2? A2");
  EXPECT_EQ(p.hierarchy, (QsHierarchy{{qs("Q1?", "A1", {qs("Q2?", "A2")})}}));
  EXPECT_EQ(p.repairs.leading_tokens, 2u);
  EXPECT_EQ(p.repairs.empty_pairs, 0u);
  EXPECT_TRUE(p.repairs.any());
}

TEST(QsHierarchyParse, ShallowerThanTopLevelClamps) {
  const Parsed p = parse("Q1? A1 [L↓] Q2? A2 [L↑] Q3? A3 [L↓] [L↓] [L↓] Q4? A4");
  EXPECT_EQ(p.hierarchy,
            (QsHierarchy{{qs("Q1?", "A1"), qs("Q2?", "A2", {qs("Q3?", "A3")}), qs("Q4?", "A4")}}));
  EXPECT_EQ(p.repairs.clamped_shallower, 3u);  // one after Q1, two after Q3
  EXPECT_EQ(p.repairs.empty_pairs, 0u);  // "[L↓] [L↓]" is how linearize() writes two levels up
}

TEST(QsHierarchyParse, RepeatedDeeperJumpsOneLevel) {
  const Parsed p = parse("Q1? A1 [L↑][L↑] Q2? A2 [L↑] [L↑] [L↑] Q3? A3");
  EXPECT_EQ(p.hierarchy, (QsHierarchy{{qs("Q1?", "A1", {qs("Q2?", "A2", {qs("Q3?", "A3")})})}}));
  EXPECT_EQ(p.repairs.clamped_deeper, 3u);
  EXPECT_EQ(p.repairs.empty_pairs, 3u);
}

TEST(QsHierarchyParse, EmptyPairsAreDroppedAndTheirTokensCarryOver) {
  const Parsed p = parse("Q1? A1 [L↑] [L-] Q2? A2 [L-]   [L↓] Q3? A3 [L-]");
  EXPECT_EQ(p.hierarchy, (QsHierarchy{{qs("Q1?", "A1", {qs("Q2?", "A2")}), qs("Q3?", "A3")}}));
  EXPECT_EQ(p.repairs.empty_pairs, 3u);
  EXPECT_EQ(p.repairs.clamped_deeper + p.repairs.clamped_shallower, 0u);
}

TEST(QsHierarchyParse, PairWithoutQuestionIsASummary) {
  const Parsed p = parse("  the answer to the root  [L↑] Why? Because. Really? Yes.");
  EXPECT_EQ(p.hierarchy,
            (QsHierarchy{{qs("", "the answer to the root", {qs("Why?", "Because. Really? Yes.")})}}));
  EXPECT_EQ(p.repairs.pairs_without_question, 1u);
  EXPECT_FALSE(p.repairs.any());
}

TEST(QsHierarchyParse, TokensNeedNoSpacesAndPartialTokensAreText) {
  const Parsed p = parse("Q1?A1[L↑]Q2? A2 [L x");
  EXPECT_EQ(p.hierarchy, (QsHierarchy{{qs("Q1?", "A1", {qs("Q2?", "A2 [L x")})}}));
  EXPECT_FALSE(p.repairs.any());
}

TEST(QsHierarchyParse, OnlyTokensOrNothingGiveAnEmptyHierarchy) {
  Parsed p = parse("[L↑] [L↓][L-]  ");
  EXPECT_TRUE(p.hierarchy.roots.empty());
  EXPECT_EQ(p.repairs.leading_tokens, 3u);
  EXPECT_TRUE(p.repairs.any());

  for (const char* text : {"", "   \n\t "}) {
    p = parse(text);
    EXPECT_TRUE(p.hierarchy.roots.empty());
    EXPECT_FALSE(p.repairs.any());
  }
}

TEST(QsHierarchyParse, DepthIsCapped) {
  std::string text = "Q0? A";
  for (int i = 1; i <= 2 * kMaxQsDepth; ++i) text.append(" [L↑] Q? A");
  const Parsed p = parse(text);
  const FlatQs flat = flatten(p.hierarchy);
  EXPECT_EQ(flat.size(), static_cast<std::size_t>(2 * kMaxQsDepth + 1));
  EXPECT_EQ(*std::max_element(flat.depth.begin(), flat.depth.end()), kMaxQsDepth - 1);
  EXPECT_EQ(p.repairs.clamped_deeper, static_cast<std::size_t>(kMaxQsDepth + 1));
}

TEST(QsHierarchyParse, UnusableTokensAreAnError) {
  EXPECT_NE(error_of([] { parse_hierarchy("a", LevelTokens{"", "b", "c"}); }).find("empty"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_hierarchy("a", LevelTokens{"x", "x", "c"}); }).find("differ"),
            std::string::npos);
}

// ---- random round trips --------------------------------------------------------------------

const std::vector<std::string> kWords{"budget", "Congress", "HUD", "law", "the", "funds",
                                      "$13.7", "billion", "(P.L.", "111-8)", "report", "on"};

std::string random_words(std::mt19937& rng, int min_words) {
  std::string text;
  const int n = min_words + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    if (!text.empty()) text.append(" ");
    text.append(kWords[rng() % kWords.size()]);
  }
  return text;
}

std::vector<QsNode> random_nodes(std::mt19937& rng, int depth) {
  std::vector<QsNode> nodes(depth == 0 ? 1 + rng() % 3 : rng() % (4 - std::min(depth, 3)));
  for (QsNode& node : nodes) {
    const unsigned shape = rng() % 6;  // mostly both fields; sometimes one of them
    if (shape != 0) node.question = random_words(rng, 1) + "?";
    if (shape != 1) node.summary = random_words(rng, 1) + ".";
    node.children = random_nodes(rng, depth + 1);
  }
  return nodes;
}

TEST(QsHierarchyParse, RoundTripsRandomHierarchies) {
  std::mt19937 rng(20240501);
  for (int trial = 0; trial < 300; ++trial) {
    const QsHierarchy h{random_nodes(rng, 0)};
    const std::string text = linearize(h);
    QsParseRepairs repairs;
    EXPECT_EQ(parse_hierarchy(text, {}, &repairs), h) << text;
    EXPECT_FALSE(repairs.any()) << text;
  }
}

// Whatever the text, parsing gives a tree that linearize() writes and parse reads back.
TEST(QsHierarchyParse, RandomTextParsesToAFixedPoint) {
  const std::vector<std::string> pieces{"[L↑]", "[L↓]", "[L-]", "?", " ", "a", "b c", "[L", "↑"};
  std::mt19937 rng(7);
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    for (int i = static_cast<int>(rng() % 30); i > 0; --i) text.append(pieces[rng() % pieces.size()]);
    const QsHierarchy once = parse_hierarchy(text);
    EXPECT_EQ(parse_hierarchy(linearize(once)), once) << text;
  }
}

// ---- hierarchy F1 --------------------------------------------------------------------------
// Summaries are made of words of at most three letters (never stemmed), so ROUGE is counted by
// hand: identical summaries of two or more words give ROUGE-1 F = ROUGE-2 F = 1, so
// s = R1F + R2F = 2; summaries with no word in common give s = 0.

TEST(HierarchyF1, IdenticalHierarchiesScoreOne) {
  // Edges (a,b), (b,c), (a,d): each maps onto itself, weight (2 + 2) / 4 = 1.
  // P = 3 / 3, R = 3 / 3, F1 = 1.
  const QsHierarchy h{{qs("A?", "cat dog", {qs("B?", "red sun", {qs("C?", "big map")}),
                                              qs("D?", "old car")})}};
  const HierarchyF1 s = hierarchy_f1(h, h);
  EXPECT_DOUBLE_EQ(s.precision, 1.0);
  EXPECT_DOUBLE_EQ(s.recall, 1.0);
  EXPECT_DOUBLE_EQ(s.f1, 1.0);
  EXPECT_EQ(s.generated_edges, 3u);
  EXPECT_EQ(s.reference_edges, 3u);
  EXPECT_EQ(s.matched_edges, 3u);
}

TEST(HierarchyF1, AncestorMatchesAndMissingEdgesLowerRecall) {
  // Reference a -> b -> c (2 edges). Generated a -> c, with b at the top level (1 edge).
  // (a, c) maps onto (a, c); a is c's grandparent: a match, weight (2 + 2) / 4 = 1.
  // P = 1 / 1 = 1, R = 1 / 2, F1 = 2 * 1 * 0.5 / 1.5 = 2/3.
  const QsHierarchy reference{{qs("A?", "cat dog", {qs("B?", "red sun", {qs("C?", "big map")})})}};
  const QsHierarchy generated{{qs("A?", "cat dog", {qs("C?", "big map")}), qs("B?", "red sun")}};
  const HierarchyF1 s = hierarchy_f1(generated, reference);
  EXPECT_DOUBLE_EQ(s.precision, 1.0);
  EXPECT_DOUBLE_EQ(s.recall, 0.5);
  EXPECT_DOUBLE_EQ(s.f1, 2.0 / 3);
  EXPECT_EQ(s.matched_edges, 1u);
}

TEST(HierarchyF1, PartialSummariesWeighEdges) {
  // Reference p1 "cat dog fox owl" -> p2 "red sun hat map" (1 edge).
  // Generated g1 "cat dog fox yak" -> g2 "red sun hat map" -> g3 "zip zap" (2 edges).
  // s(g1, p1): ROUGE-1 3 of 4 words both ways, F = 3/4; ROUGE-2 "cat dog", "dog fox" of 3
  //   bigrams both ways, F = 2/3; s = 17/12. s(g1, p2) = 0, so g1 -> p1, best 17/12.
  // g2 -> p2 with s = 2. g3 shares no word: s = 0 with both, the tie goes to p1, best 0.
  // (g1, g2) -> (p1, p2): p1 is p2's parent, a match of weight (17/12 + 2) / 4 = 41/48.
  // (g2, g3) -> (p2, p1): p2 is not p1's ancestor, no match.
  // P = (41/48) / 2 = 41/96, R = (41/48) / 1 = 41/48, F1 = 2PR / (P + R) = 4P/3 = 41/72.
  const QsHierarchy reference{{qs("P1?", "cat dog fox owl", {qs("P2?", "red sun hat map")})}};
  const QsHierarchy generated{
      {qs("G1?", "cat dog fox yak", {qs("G2?", "red sun hat map", {qs("G3?", "zip zap")})})}};
  const HierarchyF1 s = hierarchy_f1(generated, reference);
  EXPECT_NEAR(s.precision, 41.0 / 96, 1e-12);
  EXPECT_NEAR(s.recall, 41.0 / 48, 1e-12);
  EXPECT_NEAR(s.f1, 41.0 / 72, 1e-12);
  EXPECT_EQ(s.generated_edges, 2u);
  EXPECT_EQ(s.reference_edges, 1u);
  EXPECT_EQ(s.matched_edges, 1u);
}

TEST(HierarchyF1, TiesMapToTheFirstReferencePairAndSelfEdgesDoNotMatch) {
  // Reference r0 "cat dog" -> r1 "cat dog". Both generated pairs tie between r0 and r1 and
  // map to r0; r0 is not its own ancestor, so the one generated edge does not match.
  // P = 0 / 1, R = 0 / 1, F1 = 0.
  const QsHierarchy reference{{qs("R0?", "cat dog", {qs("R1?", "cat dog")})}};
  const HierarchyF1 s = hierarchy_f1(reference, reference);
  EXPECT_EQ(s.matched_edges, 0u);
  EXPECT_EQ(s.precision, 0.0);
  EXPECT_EQ(s.recall, 0.0);
  EXPECT_EQ(s.f1, 0.0);
}

TEST(HierarchyF1, SummariesAreStemmed) {
  // "cats running" and "cat runs" stem to "cat run" both: s = 2, weight 1, P = R = F1 = 1.
  const QsHierarchy reference{{qs("A?", "cat runs", {qs("B?", "red sun")})}};
  const QsHierarchy generated{{qs("A?", "cats running", {qs("B?", "red sun")})}};
  EXPECT_DOUBLE_EQ(hierarchy_f1(generated, reference).f1, 1.0);
}

TEST(HierarchyF1, HierarchiesWithoutEdgesScoreZero) {
  const QsHierarchy flat{{qs("A?", "cat dog"), qs("B?", "red sun")}};
  const QsHierarchy deep{{qs("A?", "cat dog", {qs("B?", "red sun")})}};
  for (const auto& [generated, reference] :
       {std::pair{flat, flat}, std::pair{flat, deep}, std::pair{deep, flat}, std::pair{deep, QsHierarchy{}},
        std::pair{QsHierarchy{}, QsHierarchy{}}}) {
    const HierarchyF1 s = hierarchy_f1(generated, reference);
    EXPECT_EQ(s.f1, 0.0);
    EXPECT_EQ(s.matched_edges, 0u);
  }
  // deep against flat: the edge maps to (a, b), unrelated in the flat reference.
  EXPECT_EQ(hierarchy_f1(deep, flat).generated_edges, 1u);
  EXPECT_EQ(hierarchy_f1(deep, flat).reference_edges, 0u);
}

TEST(HierarchyF1, CorpusScoreIsTheMeanOfExamples) {
  const std::vector<HierarchyF1> examples{{1.0, 0.5, 2.0 / 3, 1, 2, 1}, {0.0, 0.0, 0.0, 3, 1, 0}};
  const HierarchyF1 mean = mean_hierarchy_f1(examples);
  EXPECT_DOUBLE_EQ(mean.precision, 0.5);
  EXPECT_DOUBLE_EQ(mean.recall, 0.25);
  EXPECT_DOUBLE_EQ(mean.f1, 1.0 / 3);
  EXPECT_EQ(mean.generated_edges, 4u);
  EXPECT_EQ(mean.reference_edges, 3u);
  EXPECT_EQ(mean.matched_edges, 1u);
  EXPECT_EQ(mean_hierarchy_f1({}).f1, 0.0);
}

// ---- JSONL ---------------------------------------------------------------------------------

class QsHierarchyJsonl : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("strata_qs_") + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& text) {
    const std::filesystem::path path = dir_ / "qs.jsonl";
    std::ofstream(path) << text;
    return path;
  }

  std::string error_for(const std::string& second_line) {
    const std::filesystem::path path =
        write(std::string("{\"document\": \"d\", \"hierarchy\": []}\n") + second_line + "\n");
    return error_of([&] { load_qs_hierarchies(path); });
  }

  std::filesystem::path dir_;
};

TEST_F(QsHierarchyJsonl, ReadsNestedHierarchies) {
  const auto path = write(
      "{\"id\": 7, \"document\": \"The report.\", \"hierarchy\": [{\"question\": \"Q1?\", \"summary\": "
      "\"A1\", \"children\": [{\"question\": \"Q1.1?\", \"summary\": \"A1.1\"}]}, "
      "{\"question\": \"Q2?\", \"summary\": \"A2\", \"children\": []}]}\n"
      "\n"
      "{\"document\": \"\", \"hierarchy\": [], \"extra\": 1}\n");
  const std::vector<QsExample> examples = load_qs_hierarchies(path);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].id, "7");
  EXPECT_EQ(examples[0].document.text, "The report.");
  EXPECT_EQ(examples[0].hierarchy,
            (QsHierarchy{{qs("Q1?", "A1", {qs("Q1.1?", "A1.1")}), qs("Q2?", "A2")}}));
  EXPECT_EQ(examples[1].id, path.string() + ":3");
  EXPECT_TRUE(examples[1].hierarchy.roots.empty());
}

TEST_F(QsHierarchyJsonl, ReadsANativeDocumentWithItsSectionTree) {
  const auto path = write(
      "{\"id\": \"p\", \"document\": {\"title\": \"ls\", \"sections\": [{\"heading\": \"DESCRIPTION\", "
      "\"paragraphs\": [\"Lists files.\"], \"sections\": [{\"heading\": \"Sorting\", \"paragraphs\": "
      "[\"By name.\"]}]}]}, \"hierarchy\": [{\"question\": \"What is ls?\", \"summary\": \"A lister.\"}]}\n");
  const std::vector<QsExample> examples = load_qs_hierarchies(path);
  ASSERT_EQ(examples.size(), 1u);
  const Document& d = examples[0].document;
  EXPECT_EQ(d.text, "Lists files.\n\nBy name.");
  ASSERT_EQ(d.root.children.size(), 1u);
  EXPECT_EQ(d.root.children[0].heading, "DESCRIPTION");
  ASSERT_EQ(d.root.children[0].children.size(), 1u);
  EXPECT_EQ(d.root.children[0].children[0].level, 2);
}

TEST_F(QsHierarchyJsonl, WrittenExamplesReadBackTheSame) {
  QsExample flat{"a", {}, figure_one()};
  flat.document.text = "One.\n\nTwo.";
  const auto path = write(qs_example_json(flat).dump() + "\n" +
                          "{\"id\": \"b\", \"document\": {\"title\": \"T\", \"sections\": [{\"heading\": \"H\", "
                          "\"paragraphs\": [\"Text.\"]}]}, \"hierarchy\": []}\n");
  const std::vector<QsExample> first = load_qs_hierarchies(path);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(qs_example_json(first[0]).dump(), qs_example_json(flat).dump());
  EXPECT_TRUE(qs_example_json(first[0])["document"].is_string());
  EXPECT_TRUE(qs_example_json(first[1])["document"].is_object());
  const auto again = write(qs_example_json(first[0]).dump() + "\n" + qs_example_json(first[1]).dump() + "\n");
  const std::vector<QsExample> second = load_qs_hierarchies(again);
  ASSERT_EQ(second.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(second[i].hierarchy, first[i].hierarchy);
    EXPECT_EQ(second[i].document.text, first[i].document.text);
    EXPECT_EQ(second[i].document.section_count(), first[i].document.section_count());
  }
}

TEST_F(QsHierarchyJsonl, ErrorsNameFileLineAndFieldPath) {
  const std::string file = (dir_ / "qs.jsonl").string();
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": [{\"question\": \"Q?\", \"summary\": \"A\", "
                      "\"children\": [{\"question\": \"a?\", \"summary\": \"b\"}, "
                      "{\"question\": \"c?\", \"summary\": 3}]}]}"),
            file + ":2: field 'hierarchy[0].children[1].summary': expected a string, got number");
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": [{\"summary\": \"A\"}]}"),
            file + ":2: field 'hierarchy[0].question': missing");
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": [{\"question\": \"Q?\", \"summary\": \"A\", "
                      "\"child\": []}]}"),
            file + ":2: field 'hierarchy[0].child': unknown field (a QS pair has question, summary, "
                   "children)");
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": [{\"question\": \"Q?\", \"summary\": \"A\", "
                      "\"children\": {}}]}"),
            file + ":2: field 'hierarchy[0].children': expected an array, got object");
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": [\"Q? A\"]}"),
            file + ":2: field 'hierarchy[0]': expected a QS pair object, got string");
  EXPECT_EQ(error_for("{\"document\": \"d\", \"hierarchy\": \"Q? A\"}"),
            file + ":2: field 'hierarchy': expected an array, got string");
  EXPECT_EQ(error_for("{\"document\": \"d\"}"), file + ":2: field 'hierarchy': missing");
  EXPECT_EQ(error_for("{\"hierarchy\": []}"), file + ":2: field 'document': missing");
  EXPECT_EQ(error_for("{\"document\": 3, \"hierarchy\": []}"),
            file + ":2: field 'document': expected a string or a native document object, got number");
  EXPECT_EQ(error_for("{\"id\": [1], \"document\": \"d\", \"hierarchy\": []}"),
            file + ":2: field 'id': expected a string or an integer, got array");
  EXPECT_NE(error_for("{\"document\": ").find(file + ":2: malformed JSON"), std::string::npos);
}

TEST_F(QsHierarchyJsonl, TooDeepIsAnError) {
  // `levels` nested QS pairs as a "hierarchy" value.
  const auto nested = [](int levels) {
    std::string list = "[]";
    for (int i = 0; i < levels; ++i)
      list = std::string("[{\"question\": \"q?\", \"summary\": \"s\", \"children\": ").append(list).append("}]");
    return std::string("{\"document\": \"d\", \"hierarchy\": ").append(list).append("}");
  };
  EXPECT_EQ(error_for(nested(kMaxQsDepth)), "(no error)");
  EXPECT_NE(error_for(nested(kMaxQsDepth + 1)).find("QS pairs nested deeper than 100 levels"),
            std::string::npos);
}

}  // namespace
}  // namespace strata
