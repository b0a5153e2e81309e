// The chapter-2 evidence oracle on a hand-made document, scores worked out by hand, and
// against a direct computation with RougeScorer on a larger random one.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "strata/eval/evidence_oracle.h"
#include "strata/eval/rouge.h"

namespace strata {
namespace {

// Stemmed tokens: the cat sat on the mat | dog chase cat in the park | stock price fell
// sharpli | the cat sat quietli | zebra graze.
const std::vector<std::string> kDocument = {
    "The cat sat on the mat.", "Dogs chase cats in the park.", "Stock prices fell sharply.",
    "The cat sat quietly.", "Zebras graze."};

TEST(EvidenceOracle, PicksTheTwoBestPerSummarySentenceInSummaryOrder) {
  // "the cat sat" against 0: R1 F 2/3, R2 F 4/7, RL F 2/3, mean 40/63; against 3: 6/7, 4/5,
  // 6/7, mean 88/105; against 1: "the" and "cat" only, 4/9, 0, 2/9, mean 2/9. Picks 3, 0.
  // "stock price fell quietli" against 2: 3/4, 2/3, 3/4, mean 13/18; against 3: "quietli",
  // 1/4, 0, 1/4, mean 1/6; 0 elsewhere. Picks 2, then 3 again: not repeated.
  const std::vector<std::string> summary = {"The cat sat.", "Stock prices fell quietly."};
  EXPECT_EQ(evidence_oracle(kDocument, summary), (std::vector<std::size_t>{3, 0, 2}));
  EXPECT_EQ(evidence_oracle(kDocument, summary, 1), (std::vector<std::size_t>{3, 2}));
}

TEST(EvidenceOracle, NeverPicksASentenceWithoutAWordInCommon) {
  // Only sentence 4 shares a word with "zebra graze": the second-best scores 0. Nothing
  // shares one with "noth here".
  const std::vector<std::string> summary = {"Zebras graze.", "Nothing here."};
  EXPECT_EQ(evidence_oracle(kDocument, summary), (std::vector<std::size_t>{4}));
}

TEST(EvidenceOracle, BreaksTiesTowardTheEarlierSentenceAndHandlesEmptyInput) {
  const std::vector<std::string> document = {"A dog ran.", "The cat sat.", "The cat sat."};
  EXPECT_EQ(evidence_oracle(document, std::vector<std::string>{"The cat sat."}, 1),
            (std::vector<std::size_t>{1}));
  EXPECT_TRUE(evidence_oracle({}, std::vector<std::string>{"The cat sat."}).empty());
  EXPECT_TRUE(evidence_oracle(document, {}).empty());
}

// The rule computed directly: every pair scored with RougeScorer on the texts.
std::vector<std::size_t> direct_oracle(const std::vector<std::string>& document,
                                       const std::vector<std::string>& summary) {
  const RougeScorer scorer(std::vector<std::string>{"rouge1", "rouge2", "rougeL"}, true);
  std::vector<std::size_t> picked;
  for (const std::string& target : summary) {
    std::vector<std::pair<double, std::size_t>> ranked;  // (-score, index): best first
    for (std::size_t i = 0; i < document.size(); ++i) {
      const std::vector<RougeScore> row = scorer.score_row(target, document[i]);
      ranked.emplace_back(-(row[0].fmeasure + row[1].fmeasure + row[2].fmeasure) / 3, i);
    }
    std::sort(ranked.begin(), ranked.end());
    for (std::size_t rank = 0; rank < 2 && rank < ranked.size() && ranked[rank].first < 0; ++rank)
      if (std::find(picked.begin(), picked.end(), ranked[rank].second) == picked.end())
        picked.push_back(ranked[rank].second);
  }
  return picked;
}

TEST(EvidenceOracle, AgreesWithScoringEveryPairWithRougeScorer) {
  const std::vector<std::string> words = {"files", "copy", "copies", "host", "hosts", "the",
                                          "remote", "keeps", "permissions", "error", "Errors"};
  std::mt19937 rng(7);
  const auto sentence = [&] {
    std::string text;
    for (std::size_t n = 3 + rng() % 8; n > 0; --n) text += words[rng() % words.size()] + " ";
    return text;
  };
  std::vector<std::string> document(300), summary(6);
  std::generate(document.begin(), document.end(), sentence);
  std::generate(summary.begin(), summary.end(), sentence);
  EXPECT_EQ(evidence_oracle(document, summary), direct_oracle(document, summary));
}

TEST(EvidenceSentences, SplitsDocumentsAndSummaries) {
  DocumentBuilder b("tool(1)");
  b.add_paragraph("Intro text.");
  b.open_section("DESCRIPTION", 1);
  b.add_paragraph("Tool copies files. It keeps permissions.");
  b.open_section("Details", 2);
  b.add_paragraph("Errors go to stderr.");
  b.open_section("BUGS", 1);
  b.add_paragraph("None known.");
  const Document d = b.finish();
  EXPECT_EQ(document_sentences(d),
            (std::vector<std::string>{"Intro text.", "Tool copies files.", "It keeps permissions.",
                                      "Errors go to stderr.", "None known."}));
  EXPECT_EQ(document_sentences(d, "description"),
            (std::vector<std::string>{"Tool copies files.", "It keeps permissions.",
                                      "Errors go to stderr."}));
  EXPECT_EQ(document_sentences(d, "EXAMPLES"), document_sentences(d));

  EXPECT_EQ(summary_sentences("copy files and directories"),
            (std::vector<std::string>{"copy files and directories"}));
  EXPECT_EQ(summary_sentences("First one. Second one.\n\nthird line\n"),
            (std::vector<std::string>{"First one.", "Second one.", "third line"}));
  EXPECT_TRUE(summary_sentences("").empty());
}

}  // namespace
}  // namespace strata
