// ROUGE against the values published in rouge-score's test suite (ROUGE-1.5.5 runs),
// read at run time from shared/peer-testdata/rouge/ (see its README.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/core/files.h"
#include "strata/eval/rouge.h"

namespace strata {
namespace {

const std::filesystem::path kDir = STRATA_SHARED_DIR "/peer-testdata/rouge";
constexpr int kCases = 7;

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  const std::string text = read_file(path);
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

nlohmann::json cases() { return nlohmann::json::parse(read_file(kDir / "expected.json"))["cases"]; }

class RougePeerData : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kDir / "expected.json")) {
      GTEST_SKIP() << "peer test data not found at " << kDir
                   << " (the shared/ folder beside the checkout); skipping";
    }
  }
};

TEST_P(RougePeerData, MatchesPublishedScoresWithin1e5) {
  const nlohmann::json c = cases().at(GetParam());
  std::string target, prediction;
  if (c.contains("target_line")) {
    const std::size_t line = c["target_line"].get<std::size_t>();
    target = lines_of(kDir / "target.txt").at(line);
    prediction = lines_of(kDir / "prediction.txt").at(line);
  } else if (c.contains("files")) {
    target = read_file(kDir / c["files"][0].get<std::string>());
    prediction = read_file(kDir / c["files"][1].get<std::string>());
  } else {
    target = c["target"].get<std::string>();
    prediction = c["prediction"].get<std::string>();
  }
  std::vector<std::string> types;
  for (const auto& [key, value] : c.items()) {
    if (key.starts_with("rouge")) types.push_back(key);
  }
  ASSERT_FALSE(types.empty());
  const auto scores = RougeScorer(types, c["stem"].get<bool>()).score(target, prediction);
  for (const std::string& type : types) {
    SCOPED_TRACE(type + " in case " + c.dump());
    const RougeScore& s = scores.at(type);
    EXPECT_NEAR(s.precision, c[type][0].get<double>(), 1e-5);
    EXPECT_NEAR(s.recall, c[type][1].get<double>(), 1e-5);
    EXPECT_NEAR(s.fmeasure, c[type][2].get<double>(), 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Rouge155, RougePeerData, ::testing::Range(0, kCases));

TEST(RougePeerDataFile, HasOneTestPerCase) {
  if (!std::filesystem::exists(kDir / "expected.json")) {
    GTEST_SKIP() << "peer test data not found at " << kDir << "; skipping";
  }
  EXPECT_EQ(cases().size(), static_cast<std::size_t>(kCases))
      << "expected.json changed: update kCases so that every case is tested";
}

}  // namespace
}  // namespace strata
