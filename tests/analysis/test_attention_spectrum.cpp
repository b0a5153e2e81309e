// Spectrum analysis of prefix attention (seed 000 A.7, Figure 7) on hand-computed matrices:
// the normalised cumulative singular values, averaging, the area and 0.9 index, and the
// lower / upper summary of an encoder.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "strata/analysis/attention_spectrum.h"
#include "strata/core/error.h"
#include "support/expect.h"

namespace strata::analysis {
namespace {

using test_support::error_of;

void expect_curve(const SpectrumCurve& curve, const std::vector<double>& expected) {
  ASSERT_EQ(curve.size(), expected.size());
  for (std::size_t k = 0; k < curve.size(); ++k) EXPECT_NEAR(curve[k], expected[k], 1e-9) << "c_" << k + 1;
}

TEST(CumulativeSpectrum, ARankOneMatrixHasAllItsMassInTheFirstSingularValue) {
  // Every query attends to the prefixes alike: rows equal, rank 1.
  const at::Tensor rows = torch::tensor({0.1, 0.2, 0.3, 0.4}, torch::kDouble).repeat({5, 1});
  expect_curve(cumulative_spectrum(rows), {1, 1, 1, 1});
}

TEST(CumulativeSpectrum, AnIdentityGivesKOverN) {
  expect_curve(cumulative_spectrum(torch::eye(4, torch::kFloat)), {0.25, 0.5, 0.75, 1});
  // A permutation has the same singular values.
  const at::Tensor swapped = torch::tensor({0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0}).view({3, 3});
  expect_curve(cumulative_spectrum(swapped), {1.0 / 3, 2.0 / 3, 1});
}

TEST(CumulativeSpectrum, HandComputedSingularValues) {
  // [[0, 3], [1, 0]]: singular values 3 and 1.
  expect_curve(cumulative_spectrum(torch::tensor({0.0, 3.0, 1.0, 0.0}).view({2, 2})), {0.75, 1});
  // Fewer queries than prefixes: the missing singular values are 0, the curve stays at 1.
  expect_curve(cumulative_spectrum(torch::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0}).view({2, 3})), {0.5, 1, 1});
}

TEST(CumulativeSpectrum, RejectsMatricesWithoutASpectrum) {
  EXPECT_NE(error_of([] { cumulative_spectrum(torch::zeros({3, 0})); }).find("the model has no prefixes"),
            std::string::npos);
  EXPECT_NE(error_of([] { cumulative_spectrum(torch::zeros({3, 2})); }).find("no weight on the prefixes"),
            std::string::npos);
  EXPECT_THROW(cumulative_spectrum(torch::zeros({0, 2})), Error);
  EXPECT_THROW(cumulative_spectrum(torch::ones({2, 2, 2})), Error);
}

TEST(PrefixSpectrum, ReadsOnlyThePrefixColumns) {
  // Two prefix columns (the identity), then two input keys that would change the spectrum.
  const at::Tensor map = torch::tensor({0.5, 0.0, 0.25, 0.25, 0.0, 0.5, 0.5, 0.0}).view({2, 4});
  expect_curve(prefix_spectrum(map, 2), {0.5, 1});
  EXPECT_NE(error_of([&] { prefix_spectrum(map, 0); }).find("the model has no prefixes"), std::string::npos);
  EXPECT_THROW(prefix_spectrum(map, 5), Error);
}

TEST(SpectrumCurves, AverageAreaAndIndex) {
  const std::vector<SpectrumCurve> curves = {{0.5, 1}, {1, 1}, {0.6, 1}};
  expect_curve(mean_curve(curves), {0.7, 1});
  EXPECT_NE(error_of([] { mean_curve(std::vector<SpectrumCurve>{{1}, {0.5, 1}}); }).find("cannot be averaged"),
            std::string::npos);
  EXPECT_THROW(mean_curve(std::vector<SpectrumCurve>{}), Error);

  EXPECT_DOUBLE_EQ(curve_area(std::vector<double>{1, 1, 1}), 1.0);
  // P equal singular values: (P + 1) / (2P).
  EXPECT_NEAR(curve_area(std::vector<double>{0.25, 0.5, 0.75, 1}), 5.0 / 8, 1e-12);
  EXPECT_EQ(curve_area(std::vector<double>{}), 0.0);

  EXPECT_EQ(index_reaching(std::vector<double>{0.5, 0.9, 1}, 0.9), 2u);
  EXPECT_EQ(index_reaching(std::vector<double>{0.95, 1}, 0.9), 1u);
  EXPECT_EQ(index_reaching(std::vector<double>{0.5, 0.8}, 0.9), 0u);
}

TEST(SpectrumCurves, MapsWithoutPrefixWeightAreLeftOutAndCounted) {
  // Two heads over 2 prefixes and 1 key: one reads the first prefix only (rank 1), the other no
  // prefix at all (TruncSA truncated them away): the mean is the first head's curve.
  const at::Tensor reading = torch::tensor({{1.0, 0.0, 0.0}, {1.0, 0.0, 0.0}});
  const at::Tensor silent_head = torch::tensor({{0.0, 0.0, 1.0}, {0.0, 0.0, 1.0}});
  std::size_t silent = 0;
  expect_curve(mean_prefix_spectrum({reading, silent_head}, 2, silent), {1, 1});
  EXPECT_EQ(silent, 1u);
  EXPECT_TRUE(mean_prefix_spectrum({silent_head}, 2, silent).empty());
  EXPECT_EQ(silent, 2u);
}

TEST(SummarizeSpectrum, AveragesExamplesThenTheLowerAndUpperLayers) {
  // Four layers of two examples each; layers 0 and 1 are the lower ones.
  const std::vector<std::vector<SpectrumCurve>> curves = {
      {{0.8, 1}, {1, 1}}, {{0.6, 1}, {0.6, 1}}, {{0.5, 1}, {0.7, 1}}, {{0.5, 1}, {0.5, 1}}};
  const EncoderSpectrum s = summarize_spectrum(curves, 2);
  EXPECT_EQ(s.prefix_length, 2);
  EXPECT_EQ(s.examples, 2u);
  EXPECT_EQ(s.split, 2u);
  ASSERT_EQ(s.layers.size(), 4u);
  expect_curve(s.layers[0], {0.9, 1});
  expect_curve(s.layers[2], {0.6, 1});
  expect_curve(s.lower, {0.75, 1});
  expect_curve(s.upper, {0.55, 1});

  const nlohmann::ordered_json json = to_json(s);
  EXPECT_EQ(json["prefix_length"], 2);
  EXPECT_EQ(json["examples"], 2);
  EXPECT_EQ(json["layers"].size(), 4u);
  EXPECT_EQ(json["lower"]["layers"], nlohmann::json({0, 1}));
  EXPECT_EQ(json["upper"]["layers"], nlohmann::json({2, 3}));
  EXPECT_NEAR(json["lower"]["area"].get<double>(), 0.875, 1e-12);
  EXPECT_EQ(json["lower"]["index_90"], 2);
  EXPECT_EQ(json["upper"]["curve"].size(), 2u);
}

TEST(SummarizeSpectrum, LeavesOutLayersWithoutPrefixes) {
  // Prefixes on the top layers only (model.prefix_layers = top): layers 0 and 1 have no curve.
  const std::vector<std::vector<SpectrumCurve>> top_only = {{}, {}, {{0.9, 1}}, {{0.7, 1}}};
  const EncoderSpectrum s = summarize_spectrum(top_only, 2);
  EXPECT_TRUE(s.layers[0].empty());
  EXPECT_TRUE(s.lower.empty());
  expect_curve(s.upper, {0.8, 1});
  const nlohmann::ordered_json json = to_json(s);
  EXPECT_TRUE(json["lower"].is_null());
  EXPECT_TRUE(json["layers"][1].is_null());
  EXPECT_EQ(json["upper"]["layers"], nlohmann::json({2, 3}));

  // A split beyond the stack leaves the upper half empty.
  const EncoderSpectrum all_lower = summarize_spectrum({{{1, 1}}, {{0.5, 1}}}, 5);
  EXPECT_EQ(all_lower.split, 2u);
  expect_curve(all_lower.lower, {0.75, 1});
  EXPECT_TRUE(all_lower.upper.empty());
}

TEST(SummarizeSpectrum, RejectsModelsWithoutPrefixesAndRaggedInput) {
  EXPECT_NE(error_of([] { summarize_spectrum({{}, {}}, 1); }).find("the model has no prefixes"), std::string::npos);
  EXPECT_NE(error_of([] { summarize_spectrum({}, 0); }).find("the model has no prefixes"), std::string::npos);
  EXPECT_THROW(summarize_spectrum({{{1, 1}}, {{1, 1}, {1, 1}}}, 1), Error);  // example counts differ
  EXPECT_THROW(summarize_spectrum({{{1, 1}}, {{1, 1, 1}}}, 1), Error);     // curve lengths differ
}

}  // namespace
}  // namespace strata::analysis
