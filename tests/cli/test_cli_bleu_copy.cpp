// `strata eval bleu` and `strata eval copy` run as a user would: on small generated JSONL
// files, checking the printed numbers against the library and the error messages.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/eval/bleu.h"
#include "strata/eval/chrf.h"
#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

using Result = test_support::CliResult;
using test_support::slurp;

class CliBleuCopy : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("strata_cli_bleu_copy_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::vector<nlohmann::json>& lines) {
    const fs::path path = dir_ / name;
    std::ofstream out(path);
    for (const auto& line : lines) out << line.dump() << '\n';
    return path;
  }


  Result run(const std::string& args) { return test_support::run_strata(args, dir_); }

  fs::path dir_;
};

const std::vector<std::string> kHyps{"The dog bit the man.", "It wasn't surprising.",
                                     "The man had just bitten him."};
const std::vector<std::vector<std::string>> kRefs{
    {"The dog bit the man.", "The dog had bit the man."},
    {"It was not unexpected.", "No one was surprised."},
    {"The man bit him first.", "The man had bitten the dog."}};

TEST_F(CliBleuCopy, BleuJsonWithTwoReferences) {
  std::vector<nlohmann::json> lines;
  for (std::size_t i = 0; i < kHyps.size(); ++i)
    lines.push_back({{"prediction", kHyps[i]}, {"references", kRefs[i]}});
  const Result r = run("eval bleu --json --pairs " + write("pairs.jsonl", lines).string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_NEAR(summary.at("bleu").get<double>(), 48.530827, 1e-4);  // SacreBLEU's README value
  const BleuScore expected = corpus_bleu(kHyps, kRefs);
  EXPECT_NEAR(summary.at("bleu").get<double>(), expected.score, 1e-9);
  EXPECT_NEAR(summary.at("precisions").at(1).get<double>(), expected.precisions[1], 1e-9);
  EXPECT_EQ(summary.at("sys_len").get<std::size_t>(), expected.sys_len);
  EXPECT_EQ(summary.at("ref_len").get<std::size_t>(), expected.ref_len);
  EXPECT_EQ(summary.at("count").get<int>(), 3);
  EXPECT_EQ(summary.at("signature").get<std::string>(),
            "nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:strata");
}

TEST_F(CliBleuCopy, ChrfBesideBleu) {
  std::vector<nlohmann::json> lines;
  for (std::size_t i = 0; i < kHyps.size(); ++i)
    lines.push_back({{"prediction", kHyps[i]}, {"references", kRefs[i]}});
  const Result r = run("eval bleu --json --chrf --pairs " + write("pairs.jsonl", lines).string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_NEAR(summary.at("chrf").get<double>(), 59.73, 0.005);  // SacreBLEU's README value
  EXPECT_NEAR(summary.at("chrf_plus_plus").get<double>(), corpus_chrf(kHyps, kRefs, {.word_order = 2}), 1e-9);
  EXPECT_EQ(summary.at("chrf_signature").get<std::string>(), chrf_signature({}, 2));
  const Result table = run("eval bleu --chrf --pairs " + (dir_ / "pairs.jsonl").string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("chrF2++"), std::string::npos) << table.out;
}

TEST_F(CliBleuCopy, BleuOptionsReachTheScore) {
  const fs::path pairs = write("pairs.jsonl", {{{"prediction", "A B C D"}, {"reference", "a b x y"}}});
  const Result r = run("eval bleu --json --tokenize none --smooth floor --lowercase --pairs " +
                       pairs.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  // 2/4, 1/3, floor 0.1/2, 0.1/1.
  EXPECT_NEAR(summary.at("bleu").get<double>(),
              100 * std::pow(0.5 * (1.0 / 3) * 0.05 * 0.1, 0.25), 1e-9);
  EXPECT_EQ(summary.at("signature").get<std::string>(),
            "nrefs:1|case:lc|eff:no|tok:none|smooth:floor[0.10]|version:strata");
}

TEST_F(CliBleuCopy, BleuTableAndSentenceFile) {
  const fs::path pairs = write("pairs.jsonl", {{{"prediction", "a test"}, {"reference", "a test"}},
                                               {{"prediction", "test"}, {"reference", "a test"}}});
  const fs::path sentence = dir_ / "sentence.jsonl";
  const Result r = run("eval bleu --pairs " + pairs.string() + " --sentence " + sentence.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("BLEU over 2 pairs (nrefs:1|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hyp_len"), std::string::npos);
  std::ifstream in(sentence);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0].at("bleu").get<double>(), 100.0, 1e-9);  // effective order: 2/2, 1/1
  EXPECT_NEAR(rows[1].at("bleu").get<double>(), 100 * std::exp(-1.0), 1e-9);  // BP only
}

TEST_F(CliBleuCopy, BleuErrorsNameFileLineAndField) {
  const fs::path uneven = write("uneven.jsonl", {{{"prediction", "a"}, {"references", {"a", "b"}}},
                                                 {{"prediction", "b"}, {"references", {"b"}}}});
  Result r = run("eval bleu --pairs " + uneven.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("uneven.jsonl:2: field 'references'"), std::string::npos) << r.err;

  const fs::path no_pred = write("no_pred.jsonl", {{{"reference", "a"}}});
  r = run("eval bleu --pairs " + no_pred.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no_pred.jsonl:1: field 'prediction': missing"), std::string::npos) << r.err;

  const fs::path wrong_type = write("wrong_type.jsonl", {{{"prediction", "a"}, {"reference", 3}}});
  r = run("eval bleu --pairs " + wrong_type.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("wrong_type.jsonl:1: field 'reference': expected a string"),
            std::string::npos) << r.err;

  const fs::path no_ref = write("no_ref.jsonl", {{{"prediction", "a"}}});
  r = run("eval bleu --pairs " + no_ref.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no_ref.jsonl:1: field 'reference': missing"), std::string::npos) << r.err;

  r = run("eval bleu --tokenize moses --pairs " + no_ref.string());
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(CliBleuCopy, CopyJsonCounts) {
  const fs::path pairs = write(
      "pairs.jsonl", {{{"prediction", "The cat sat on the mat."}, {"source", "the cat lay on the mat"}},
                      {{"prediction", "x y"}, {"source", "x y z"}}});
  const Result r = run("eval copy --json --max-n 3 --pairs " + pairs.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary.at("count").get<int>(), 2);
  const auto& orders = summary.at("orders");
  ASSERT_EQ(orders.size(), 3u);
  // n = 1: 5/6 and 2/2; n = 2: 3/5 and 1/1; n = 3: 1/4 only (the second has no trigram).
  EXPECT_NEAR(orders[0].at("copy_rate").get<double>(), (5.0 / 6 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(orders[1].at("novel").get<double>(), 1 - (3.0 / 5 + 1.0) / 2, 1e-12);
  EXPECT_NEAR(orders[2].at("copy_rate").get<double>(), 0.25, 1e-12);
  EXPECT_EQ(orders[2].at("pairs").get<int>(), 1);
  EXPECT_EQ(orders[0].at("copied").get<int>(), 7);
  EXPECT_EQ(orders[0].at("total").get<int>(), 8);
}

TEST_F(CliBleuCopy, CopyTableMarksMissingOrders) {
  const fs::path pairs = write("pairs.jsonl", {{{"prediction", "a b"}, {"source", "a b"}}});
  const Result r = run("eval copy --max-n 3 --pairs " + pairs.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("   2     1.0000     0.0000        1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("   3          -          -        0"), std::string::npos) << r.out;
}

TEST_F(CliBleuCopy, CopyScoresAnotherFieldAgainstTheSource) {
  const fs::path pairs = write("pairs.jsonl", {{{"prediction", "x y"}, {"reference", "a b z"}, {"source", "a b c"}}});
  const Result r = run("eval copy --json --max-n 2 --field reference --pairs " + pairs.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto orders = nlohmann::json::parse(r.out).at("orders");
  EXPECT_NEAR(orders[0].at("copy_rate").get<double>(), 2.0 / 3, 1e-12);  // a, b of a b z
  EXPECT_NEAR(orders[1].at("copy_rate").get<double>(), 1.0 / 2, 1e-12);  // "a b" of a b, b z
  const Result missing = run("eval copy --field summary --pairs " + pairs.string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("pairs.jsonl:1: field 'summary': missing"), std::string::npos) << missing.err;
}

TEST_F(CliBleuCopy, CopyErrors) {
  const fs::path no_source = write("no_source.jsonl", {{{"prediction", "a"}, {"source", "a"}},
                                                       {{"prediction", "a"}}});
  Result r = run("eval copy --pairs " + no_source.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no_source.jsonl:2: field 'source': missing"), std::string::npos) << r.err;
  const fs::path empty = write("empty.jsonl", {});
  r = run("eval copy --pairs " + empty.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no pairs"), std::string::npos) << r.err;
  r = run("eval copy --max-n 0 --pairs " + empty.string());
  EXPECT_NE(r.exit_code, 0);
}

}  // namespace
}  // namespace strata
