// `strata eval copy --attribute` run as a user would: the pooled attribution of copied n-grams
// between the extract block and the rest of the input on a hand-counted pairs file, and the
// errors for a line without the extract or context field.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"

namespace strata {
namespace {

using Result = test_support::CliResult;

class CliCopyAttribution : public test_support::ScratchTest {
 protected:
  CliCopyAttribution() : ScratchTest("strata_cli_copy_attribution") {}

  std::string pairs(const std::vector<nlohmann::json>& lines) {
    std::string text;
    for (const auto& line : lines) text += line.dump() + "\n";
    return write("pairs.jsonl", text).string();
  }
};

// Line 1, per order (extract only, context only, both, novel):
//   1: red ×2 / low / fox ×2, jumps / blue = 2, 1, 3, 1
//   2: red fox ×2 / jumps low / fox jumps / low red, fox blue = 2, 1, 1, 2
//   3: red fox jumps / fox jumps low / - / the other three = 1, 1, 0, 3
// Line 2, "x y" against extract "z" and context "x y": context only, 2 at n = 1 and 1 at n = 2.
const nlohmann::json kLine1 = {{"prediction", "Red fox jumps low, red fox blue."},
                               {"source", "red fox jumps high. fox jumps low today"},
                               {"extract", "red fox jumps high"},
                               {"context", "fox jumps low today"}};
const nlohmann::json kLine2 = {
    {"prediction", "x y"}, {"source", "z x y"}, {"extract", "z"}, {"context", "x y"}};

TEST_F(CliCopyAttribution, JsonGivesPooledSharesPerOrder) {
  const Result r = run("eval copy --attribute --json --max-n 3 --pairs " + pairs({kLine1, kLine2}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("count").get<int>(), 2);
  const auto& orders = summary.at("orders");
  ASSERT_EQ(orders.size(), 3u);
  EXPECT_NEAR(orders[0].at("copy_rate").get<double>(), (6.0 / 7 + 1.0) / 2, 1e-12);  // kept
  const auto& unigrams = orders[0].at("attribution");
  EXPECT_EQ(unigrams.at("copied").get<int>(), 8);
  EXPECT_EQ(unigrams.at("extract_only").get<int>(), 2);
  EXPECT_EQ(unigrams.at("context_only").get<int>(), 3);
  EXPECT_EQ(unigrams.at("both").get<int>(), 3);
  EXPECT_EQ(unigrams.at("novel").get<int>(), 1);
  EXPECT_NEAR(unigrams.at("from_extract_share").get<double>(), 5.0 / 8, 1e-12);
  EXPECT_NEAR(unigrams.at("extract_only_share").get<double>(), 2.0 / 8, 1e-12);
  const auto& bigrams = orders[1].at("attribution");
  EXPECT_EQ(bigrams.at("copied").get<int>(), 5);
  EXPECT_NEAR(bigrams.at("from_extract_share").get<double>(), 3.0 / 5, 1e-12);
  EXPECT_NEAR(bigrams.at("extract_only_share").get<double>(), 2.0 / 5, 1e-12);
  const auto& trigrams = orders[2].at("attribution");
  EXPECT_EQ(trigrams.at("copied").get<int>(), 2);
  EXPECT_NEAR(trigrams.at("from_extract_share").get<double>(), 1.0 / 2, 1e-12);
  EXPECT_NEAR(trigrams.at("extract_only_share").get<double>(), 1.0 / 2, 1e-12);
}

TEST_F(CliCopyAttribution, TableAddsTheAttributionColumns) {
  const Result r = run("eval copy --attribute --max-n 2 --pairs " + pairs({kLine2}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("from_extract extract_only     copied"), std::string::npos) << r.out;
  // Copied from the context alone: both shares 0.
  EXPECT_NE(r.out.find("   2     1.0000     0.0000        1       0.0000       0.0000          1"),
            std::string::npos) << r.out;
}

TEST_F(CliCopyAttribution, LineWithoutTheFieldsIsAnError) {
  nlohmann::json no_extract = kLine2;
  no_extract.erase("extract");
  const std::string file = pairs({kLine1, no_extract});
  Result r = run("eval copy --attribute --pairs " + file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("pairs.jsonl:2: field 'extract': missing"), std::string::npos) << r.err;
  r = run("eval copy --attribute --context-field rest --pairs " + file);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("pairs.jsonl:1: field 'rest': missing"), std::string::npos) << r.err;
  r = run("eval copy --pairs " + file);  // without --attribute the fields are not read
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace strata
