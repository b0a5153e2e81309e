// `strata baseline textrank` and `strata baseline evidence` (thesis ch. 2) run as a user
// would, on a tiny dataset written by the test: the predictions they write, and a missing file.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

// Document 1 is the TextRank toy of tests/eval/test_sentence_ranking.cpp.
constexpr const char* kData =
    R"({"document": "Apples, bananas and cherries. Apples and bananas, dates. Cherries and figs.", )"
    R"("summary": "Apples and bananas."})"
    "\n"
    R"({"document": "Zebras graze. Lions sleep.", "summary": "Lions sleep all day."})"
    "\n";

class CliBaselinesCh2 : public test_support::ScratchTest {
 protected:
  CliBaselinesCh2() : ScratchTest("strata_cli_baselines_ch2") {}

  // The prediction of every pair in `out`, in order.
  std::vector<std::string> predictions(const fs::path& out) {
    std::vector<std::string> lines;
    std::istringstream in(slurp(out));
    for (std::string line; std::getline(in, line);)
      lines.push_back(nlohmann::json::parse(line)["prediction"].get<std::string>());
    return lines;
  }
};

TEST_F(CliBaselinesCh2, TextRankAndEvidenceWriteTheirSentencesOnePerLine) {
  const fs::path data = write("data.jsonl", kData);
  const fs::path textrank = dir_ / "textrank.jsonl", evidence = dir_ / "evidence.jsonl";
  Result r = run("baseline textrank --sentences 2 --data " + data.string() + " --out " + textrank.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote 2 pairs"), std::string::npos) << r.out;
  // Document order; the two disjoint sentences of document 2 tie and both fit.
  EXPECT_EQ(predictions(textrank), (std::vector<std::string>{
                                       "Apples, bananas and cherries.\nApples and bananas, dates.",
                                       "Zebras graze.\nLions sleep."}));

  // "appl and banana" against the three sentences: mean ROUGE-1/2/L F 10/21, 88/105 and 2/9,
  // so the second sentence comes first, then the first. "Zebras graze." shares no word with
  // "Lions sleep all day.": one pick.
  r = run("baseline evidence --data " + data.string() + " --out " + evidence.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(predictions(evidence), (std::vector<std::string>{
                                       "Apples and bananas, dates.\nApples, bananas and cherries.",
                                       "Lions sleep."}));
}

TEST_F(CliBaselinesCh2, MissingDatasetIsNamed) {
  const fs::path absent = dir_ / "absent.jsonl";
  for (const char* system : {"textrank", "evidence"}) {
    const Result r = run(std::string("baseline ") + system + " --data " + absent.string() + " --out " +
                         (dir_ / "out.jsonl").string());
    EXPECT_NE(r.exit_code, 0) << system;
    EXPECT_NE(r.err.find("absent.jsonl"), std::string::npos) << system << ": " << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "out.jsonl")) << system;
  }
}

}  // namespace
}  // namespace strata
