// ROUGE on 80 awkward pairs against the Python peer's scores. rouge_stress.jsonl holds
// texts drawn from a tiny vocabulary (many ties in the LCS read-out), with punctuation,
// non-ASCII letters, empty lines and lines of 64, 65 and 70 tokens (both LCS code paths);
// "expected" was computed by bench/rouge_peer.py, our Python re-implementation of
// rouge-score's algorithm, which reproduces rouge-score's published test values.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/eval/rouge.h"

namespace strata {
namespace {

TEST(RougeStress, MatchesThePythonPeerExactly) {
  std::ifstream in(STRATA_FIXTURES_DIR "/eval/rouge_stress.jsonl");
  ASSERT_TRUE(in) << "missing fixture tests/fixtures/eval/rouge_stress.jsonl";
  const std::vector<std::string> types{"rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"};
  const RougeScorer plain(types, false), stemmed(types, true);
  std::string line;
  int checked = 0;
  while (std::getline(in, line)) {
    const auto c = nlohmann::json::parse(line);
    const auto& scorer = c["stem"].get<bool>() ? stemmed : plain;
    const auto scores =
        scorer.score(c["reference"].get<std::string>(), c["prediction"].get<std::string>());
    for (const std::string& type : types) {
      SCOPED_TRACE(type + " on line " + std::to_string(checked + 1));
      const auto& expected = c["expected"][type];
      EXPECT_NEAR(scores.at(type).precision, expected[0].get<double>(), 1e-12);
      EXPECT_NEAR(scores.at(type).recall, expected[1].get<double>(), 1e-12);
      EXPECT_NEAR(scores.at(type).fmeasure, expected[2].get<double>(), 1e-12);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 80);
}

}  // namespace
}  // namespace strata
