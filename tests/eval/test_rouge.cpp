// ROUGE on small hand-computed cases (rouge-score's own unit tests among them).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/rouge.h"

namespace strata {
namespace {

void expect_score(const RougeScore& s, double precision, double recall, double fmeasure) {
  EXPECT_NEAR(s.precision, precision, 1e-12);
  EXPECT_NEAR(s.recall, recall, 1e-12);
  EXPECT_NEAR(s.fmeasure, fmeasure, 1e-12);
}

const std::vector<std::string> kAllTypes{"rouge1", "rouge2", "rougeL", "rougeLsum"};

TEST(RougeTokenize, LowercasesAndSplitsOnEverythingButAsciiAlphanumerics) {
  EXPECT_EQ(rouge_tokenize("Hello, World! It's 2024\xE2\x80\x94na\xC3\xAFve caf\xC3\xA9", false),
            (std::vector<std::string>{"hello", "world", "it", "s", "2024", "na", "ve", "caf"}));
  // The two non-ASCII characters that Python lower-cases to ASCII: U+0130 and U+212A.
  EXPECT_EQ(rouge_tokenize("\xC4\xB0stanbul 5\xE2\x84\xAA \xC3\x80"
                           "B",
                           false),
            (std::vector<std::string>{"i", "stanbul", "5k", "b"}));
  EXPECT_TRUE(rouge_tokenize(" ... \n\t--", false).empty());
}

TEST(RougeTokenize, StemsOnlyTokensLongerThanThreeCharacters) {
  EXPECT_EQ(rouge_tokenize("was ties this running dogs", true),
            (std::vector<std::string>{"was", "tie", "thi", "run", "dog"}));
  EXPECT_EQ(rouge_tokenize("was ties this running dogs", false),
            (std::vector<std::string>{"was", "ties", "this", "running", "dogs"}));
}

TEST(RougeScorer, SmallSentence) {
  // target: the cat sat on the mat (6 tokens); prediction: the cat on the mat (5).
  const auto s =
      RougeScorer(kAllTypes, false).score("the cat sat on the mat", "the cat on the mat");
  expect_score(s.at("rouge1"), 1.0, 5.0 / 6, 10.0 / 11);
  expect_score(s.at("rouge2"), 3.0 / 4, 3.0 / 5, 2.0 / 3);  // the-cat, on-the, the-mat
  expect_score(s.at("rougeL"), 1.0, 5.0 / 6, 10.0 / 11);
  expect_score(s.at("rougeLsum"), 1.0, 5.0 / 6, 10.0 / 11);
}

TEST(RougeScorer, RougeScoreUnitTests) {
  const RougeScorer scorer(kAllTypes, false);
  expect_score(scorer.score("testing one two", "testing").at("rouge1"), 1, 1.0 / 3, 0.5);
  expect_score(scorer.score("testing one two", "testing one").at("rouge2"), 1, 0.5, 2.0 / 3);
  expect_score(scorer.score("testing one two", "testing one").at("rougeL"), 1, 2.0 / 3, 0.8);
  expect_score(scorer.score("testing one two", "testing two").at("rougeL"), 1, 2.0 / 3, 0.8);
}

TEST(RougeScorer, CountsAreClipped) {
  const auto s = RougeScorer(kAllTypes, false).score("a a a b", "a a");
  expect_score(s.at("rouge1"), 1, 0.5, 2.0 / 3);
  expect_score(s.at("rouge2"), 1, 1.0 / 3, 0.5);
}

TEST(RougeScorer, HigherOrderNgrams) {
  // Trigrams: target abc x2, bcd, cda, dab; prediction abc x2, bca, cab, bcd -> 3 shared.
  const auto s = RougeScorer({"rouge3"}, false).score("a b c d a b c", "a b c a b c d");
  expect_score(s.at("rouge3"), 0.6, 0.6, 0.6);
  const auto long_n = RougeScorer({"rouge9"}, false).score("a b c", "a b c");
  expect_score(long_n.at("rouge9"), 0, 0, 0);  // no 9-grams on either side
}

TEST(RougeScorer, LcsIsOrderSensitive) {
  expect_score(RougeScorer({"rougeL"}, false).score("a b c d", "d c b a").at("rougeL"), 0.25, 0.25,
               0.25);
}

TEST(RougeScorer, StemmingMatchesInflections) {
  const auto stemmed = RougeScorer(kAllTypes, true).score("running dogs", "the dog runs");
  expect_score(stemmed.at("rouge1"), 2.0 / 3, 1, 0.8);  // run, dog | the, dog, run
  expect_score(stemmed.at("rougeL"), 1.0 / 3, 0.5, 0.4);
  for (const auto& [type, score] :
       RougeScorer(kAllTypes, false).score("running dogs", "the dog runs")) {
    expect_score(score, 0, 0, 0);
  }
}

TEST(RougeScorer, EmptyTextsScoreZero) {
  const RougeScorer scorer(kAllTypes, true);
  for (const auto& [target, prediction] : std::vector<std::pair<std::string, std::string>>{
           {"testing one two", ""}, {"", "w1"}, {"w1 w2 w3 w4 w5", "/"}, {"", ""}}) {
    for (const auto& [type, score] : scorer.score(target, prediction)) {
      SCOPED_TRACE(type + " on '" + target + "' / '" + prediction + "'");
      expect_score(score, 0, 0, 0);
    }
  }
}

TEST(RougeLsum, UnionLcsExampleFromThePaper) {
  // Lin (2004), section 3.2: r = w1..w5; c1 shares w1 w2, c2 shares w1 w3 w5; the union
  // w1 w2 w3 w5 gives 4 hits: R = 4/5, P = 4/10.
  const auto s =
      RougeScorer({"rougeLsum"}, false).score("w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5");
  expect_score(s.at("rougeLsum"), 0.4, 0.8, 2 * 0.4 * 0.8 / 1.2);
}

TEST(RougeLsum, HitsAreClippedByTokenCounts) {
  // "a" is in the LCS of both target sentences but occurs once in the prediction.
  expect_score(RougeScorer({"rougeLsum"}, false).score("a a\na", "a").at("rougeLsum"), 1, 1.0 / 3,
               0.5);
}

TEST(RougeLsum, BacktrackingTieBreakIsRougeScores) {
  // Against "b a" the LCS of "a b" is "a" or "b"; rouge-score reads out "a", which the
  // second sentence also matches, so the union is {a}: 1 hit. Reading out "b" would give 2.
  expect_score(RougeScorer({"rougeLsum"}, false).score("a b", "b a\na").at("rougeLsum"), 1.0 / 3,
               0.5, 0.4);
}

TEST(RougeOnIds, LcsTableExample) {
  // rouge-score's testLcsTable: ref 1 2 3 4 5 against 2 5 3 4 (LCS 2 3 4) and 8 9 (none),
  // with the tokens numbered 0, 1, ... as TokenizedPair requires.
  TokenizedPair pair{{{0, 1, 2, 3, 4}, {5}}, {{1, 4, 2, 3}, {4}}, 5};
  expect_score(rouge_l(pair), 3.0 / 4, 3.0 / 5, 2.0 / 3);
  pair.prediction = {{5, 6}, {2}};
  pair.distinct = 7;
  expect_score(rouge_l(pair), 0, 0, 0);
}

TEST(RougeOnIds, SummaryLevelLcsIgnoresEmptySentences) {
  TokenizedPair pair{{{0}, {1}}, {{}, {0}}, 1};
  expect_score(rouge_lsum(pair), 0, 0, 0);
  pair.prediction = {{0}, {0, 0, 1}};  // two empty lines, then the token
  expect_score(rouge_lsum(pair), 1, 1, 1);
}

TEST(RougeScorer, LongTextsSpanSeveralMachineWords) {
  // 150 distinct tokens against the same with every third one left out: the LCS is the 100
  // kept, in one sentence (rougeLsum) or all of the text (rougeL).
  std::string target, prediction;
  for (int i = 0; i < 150; ++i) {
    const std::string word = 'w' + std::to_string(i) + ' ';
    target += word;
    if (i % 3 != 0) prediction += word;
  }
  const auto s = RougeScorer(kAllTypes, false).score(target, prediction);
  expect_score(s.at("rougeL"), 1, 100.0 / 150, 0.8);
  expect_score(s.at("rougeLsum"), 1, 100.0 / 150, 0.8);
  expect_score(s.at("rouge2"), 50.0 / 99, 50.0 / 149,
               2 * (50.0 / 99) * (50.0 / 149) / (50.0 / 99 + 50.0 / 149));
}

TEST(RougeScorer, TypesAreValidated) {
  EXPECT_EQ(RougeType::parse("rouge7"), (RougeType{RougeType::Kind::ngram, 7}));
  EXPECT_EQ(RougeType::parse("rougeLsum").name(), "rougeLsum");
  for (const char* bad : {"rougen", "rouge0", "rouge10", "rougel", "bleu"}) {
    try {
      RougeScorer({bad}, false);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rouge1, rouge2, rouge3"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("rougeL, rougeLsum"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(RougeScorer(std::vector<std::string>{"rouge1", "rouge1"}, false), Error);
  EXPECT_THROW(RougeScorer(std::vector<std::string>{}, false), Error);
}

TEST(RougeScorer, BatchEqualsOneByOne) {
  const RougeScorer scorer(kAllTypes, true);
  std::vector<std::string> targets, predictions;
  for (int i = 0; i < 300; ++i) {
    targets.push_back("the runner was running " + std::to_string(i % 7) + "\nfast dogs run");
    predictions.push_back("dogs ran " + std::to_string(i % 5) + " running\nthe runner runs");
  }
  const auto rows = scorer.score_batch(targets, predictions, 2);
  ASSERT_EQ(rows.size(), targets.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto row = scorer.score_row(targets[i], predictions[i]);
    for (std::size_t t = 0; t < row.size(); ++t) {
      EXPECT_EQ(rows[i][t].fmeasure, row[t].fmeasure);
      EXPECT_EQ(rows[i][t].precision, row[t].precision);
    }
  }
  EXPECT_THROW(scorer.score_batch(targets, std::vector<std::string>{"x"}), Error);
}

}  // namespace
}  // namespace strata
