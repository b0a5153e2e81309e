// SacreBLEU's own published test values (../shared/peer-testdata/bleu_cases.json), one test
// per case. The file is read at run time; without it every test skips with a message.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/eval/bleu.h"

namespace strata {
namespace {

constexpr double kPeerTol = 1e-4;  // on the scale the file states (0–100, or 0–1 for "fraction")

const std::filesystem::path kCasesPath =
    std::filesystem::path(STRATA_SHARED_DIR) / "peer-testdata" / "bleu_cases.json";

const nlohmann::json* peer_cases() {
  static const nlohmann::json cases = [] {
    std::ifstream in(kCasesPath);
    return in ? nlohmann::json::parse(in) : nlohmann::json();
  }();
  return cases.is_object() ? &cases : nullptr;
}

// One test parameter: a group key of the file and an index within it.
struct PeerCase {
  std::string group;
  std::size_t index = 0;
};

void PrintTo(const PeerCase& c, std::ostream* out) { *out << c.group << "[" << c.index << "]"; }

std::vector<PeerCase> list_cases() {
  const nlohmann::json* all = peer_cases();
  if (!all) return {{"missing", 0}};
  std::vector<PeerCase> out;
  for (const auto& [key, value] : all->items()) {
    if (key == "source" || key == "note") continue;  // descriptions, not cases
    if (value.is_array())
      for (std::size_t i = 0; i < value.size(); ++i) out.push_back({key, i});
    else
      out.push_back({key, 0});
  }
  return out;
}

std::string case_name(const testing::TestParamInfo<PeerCase>& info) {
  std::string name = info.param.group + "_" + std::to_string(info.param.index);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// The file's refs are reference streams (refs[k][i] is reference k of hypothesis i);
// strata takes the references of each hypothesis together.
std::vector<std::vector<std::string>> per_segment(const nlohmann::json& streams,
                                                  std::size_t segments) {
  std::vector<std::vector<std::string>> out(segments);
  for (const auto& stream : streams)
    for (std::size_t i = 0; i < segments; ++i) out[i].push_back(stream.at(i).get<std::string>());
  return out;
}

// SacreBLEU's raw_corpus_bleu(hyps, refs, 0.01): no tokenisation, floor 0.01, effective order.
BleuOptions raw_floor_001() {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kFloor;
  options.smooth_value = 0.01;
  options.effective_order = true;
  return options;
}

BleuScore score_case(const nlohmann::json& c, const BleuOptions& options) {
  const auto hyps = c.at("hyps").get<std::vector<std::string>>();
  return corpus_bleu(hyps, per_segment(c.at("refs"), hyps.size()), options);
}

class BleuPeerCase : public testing::TestWithParam<PeerCase> {};

TEST_P(BleuPeerCase, MatchesSacreBleu) {
  const PeerCase& param = GetParam();
  if (param.group == "missing")
    GTEST_SKIP() << "peer test data not found at " << kCasesPath
                 << " (the shared/ folder beside the checkout)";
  const nlohmann::json& group = peer_cases()->at(param.group);
  const nlohmann::json& c = group.is_array() ? group.at(param.index) : group;

  if (param.group == "corpus_cases") {
    BleuOptions options;
    options.tokenize = parse_bleu_tokenize(c.at("tokenize").get<std::string>());
    options.smooth = parse_bleu_smooth(c.at("smooth").get<std::string>());
    EXPECT_NEAR(score_case(c, options).score, c.at("bleu").get<double>(), kPeerTol);
  } else if (param.group == "raw_cases_floor_0.01") {
    EXPECT_NEAR(score_case(c, raw_floor_001()).score / 100, c.at("bleu_fraction").get<double>(),
                kPeerTol);
  } else if (param.group == "statistics") {
    const BleuScore score = score_case(c, raw_floor_001());
    const auto counts = c.at("counts").get<std::vector<std::size_t>>();
    const auto totals = c.at("totals").get<std::vector<std::size_t>>();
    EXPECT_EQ(std::vector<std::size_t>(score.counts.begin(), score.counts.end()), counts);
    EXPECT_EQ(std::vector<std::size_t>(score.totals.begin(), score.totals.end()), totals);
  } else {
    FAIL() << "bleu_cases.json has a group '" << param.group << "' that no test reads";
  }
}

INSTANTIATE_TEST_SUITE_P(BleuSacre, BleuPeerCase, testing::ValuesIn(list_cases()), case_name);

}  // namespace
}  // namespace strata
