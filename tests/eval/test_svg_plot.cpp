// The SVG line chart: tick choice, well-formed and escaped output, gaps, log scale.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/svg_plot.h"
#include "support/expect.h"

namespace strata {
namespace {


const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(NiceTicks, UnitRangeStepsByPointTwo) {
  EXPECT_EQ(nice_ticks(0, 1), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1}));
}

TEST(NiceTicks, RoundsOutwardToMultiplesOfTwenty) {
  EXPECT_EQ(nice_ticks(3, 97), (std::vector<double>{0, 20, 40, 60, 80, 100}));
}

TEST(NiceTicks, FiveStepAndSmallValues) {
  EXPECT_EQ(nice_ticks(0, 23), (std::vector<double>{0, 5, 10, 15, 20, 25}));
  EXPECT_EQ(nice_ticks(0.0001, 0.0003), (std::vector<double>{0.0001, 0.00015, 0.0002, 0.00025, 0.0003}));
}

TEST(NiceTicks, NegativeRangeAndExactEnds) {
  EXPECT_EQ(nice_ticks(-1, 1), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(nice_ticks(-10, 10), (std::vector<double>{-10, -5, 0, 5, 10}));
  EXPECT_EQ(nice_ticks(0.6, 1.0), (std::vector<double>{0.6, 0.7, 0.8, 0.9, 1.0}));
}

TEST(NiceTicks, SingleValueIsWidened) {
  const auto ticks = nice_ticks(5, 5);
  ASSERT_GE(ticks.size(), 2u);
  EXPECT_LT(ticks.front(), 5);
  EXPECT_GT(ticks.back(), 5);
  const auto zero = nice_ticks(0, 0);
  EXPECT_LT(zero.front(), 0);
  EXPECT_GT(zero.back(), 0);
}

TEST(LogTicks, PowersOfTenAroundTheRange) {
  EXPECT_EQ(log_ticks(0.003, 40), (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100}));
  EXPECT_EQ(log_ticks(2, 8), (std::vector<double>{1, 2, 5, 10}));
}

TEST(LineChart, WellFormedWithBalancedTags) {
  const std::string svg = line_chart_svg(
      {{"train", {0, 1, 2}, {3, 2, 1}}, {"validation", {0, 2}, {3.5, 1.5}}},
      {.title = "loss", .x_label = "step", .y_label = "loss"});
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(test_support::count_occurrences(svg, "<svg"), test_support::count_occurrences(svg, "</svg>"));
  EXPECT_EQ(test_support::count_occurrences(svg, "<g"), test_support::count_occurrences(svg, "</g>"));
  EXPECT_EQ(test_support::count_occurrences(svg, "<text"), test_support::count_occurrences(svg, "</text>"));
  EXPECT_EQ(test_support::count_occurrences(svg, "<polyline"), 2u);
  EXPECT_NE(svg.find(">train</text>"), std::string::npos);
  EXPECT_NE(svg.find(">validation</text>"), std::string::npos);
  // Two distinct palette colours.
  EXPECT_NE(svg.find("stroke=\"#0072B2\""), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#D55E00\""), std::string::npos);
}

TEST(LineChart, TickLabelsAreTheNiceValues) {
  const std::string svg = line_chart_svg({{"a", {3, 97}, {0, 1}}}, {});
  for (const char* label : {">0</text>", ">20</text>", ">100</text>", ">0.2</text>", ">1</text>"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

TEST(LineChart, TextIsEscaped) {
  const std::string svg =
      line_chart_svg({{"a<b & \"c\"", {0, 1}, {0, 1}}}, {.title = "loss <train> & 'val'"});
  EXPECT_NE(svg.find("a&lt;b &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_NE(svg.find("loss &lt;train&gt; &amp; &apos;val&apos;"), std::string::npos);
  EXPECT_EQ(svg.find("<b"), std::string::npos);
  EXPECT_EQ(svg.find("<train>"), std::string::npos);
}

TEST(LineChart, NonFiniteValuesSplitTheLine) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::string svg =
      line_chart_svg({{"loss", {0, 1, 2, 3, 4, 5}, {1, 2, kNaN, 3, 4, inf}}}, {});
  EXPECT_EQ(test_support::count_occurrences(svg, "<polyline"), 2u);
  EXPECT_EQ(test_support::count_occurrences(svg, "<circle"), 0u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(LineChart, LonePointIsAMarker) {
  const std::string svg = line_chart_svg({{"validation", {500}, {2.1}}}, {});
  EXPECT_EQ(test_support::count_occurrences(svg, "<polyline"), 0u);
  EXPECT_EQ(test_support::count_occurrences(svg, "<circle"), 1u);
  // An isolated point between gaps is a marker too.
  const std::string gapped = line_chart_svg({{"v", {0, 1, 2, 3, 4}, {1, kNaN, 2, kNaN, 3}}}, {});
  EXPECT_EQ(test_support::count_occurrences(gapped, "<circle"), 3u);
}

TEST(LineChart, LogScaleSkipsNonPositiveValues) {
  const std::string svg = line_chart_svg({{"lr", {0, 1, 2, 3, 4}, {0.1, 0.01, 0, 0.001, -1}}},
                                         {.log_y = true});
  // The zero splits the line; the trailing negative is dropped.
  EXPECT_EQ(test_support::count_occurrences(svg, "<polyline"), 1u);
  EXPECT_EQ(test_support::count_occurrences(svg, "<circle"), 1u);
  for (const char* label : {">0.001</text>", ">0.01</text>", ">0.1</text>"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  // Only non-positive values: nothing to draw.
  EXPECT_NE(line_chart_svg({{"z", {0, 1}, {0, -2}}}, {.log_y = true}).find(">no data</text>"),
            std::string::npos);
}

TEST(LineChart, EmptyInputSaysNoData) {
  for (const auto& series : {std::vector<Series>{}, std::vector<Series>{{"a", {}, {}}},
                             std::vector<Series>{{"a", {kNaN}, {1}}}}) {
    const std::string svg = line_chart_svg(series, {.title = "loss"});
    EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
    EXPECT_NE(svg.find(">loss</text>"), std::string::npos);
    EXPECT_EQ(test_support::count_occurrences(svg, "<polyline"), 0u);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  }
}

TEST(LineChart, SizeFromOptions) {
  const std::string svg = line_chart_svg({{"a", {0, 1}, {0, 1}}}, {.width = 300, .height = 200});
  EXPECT_NE(svg.find("width=\"300\" height=\"200\" viewBox=\"0 0 300 200\""), std::string::npos);
}

TEST(LineChart, DeterministicBytes) {
  const std::vector<Series> series{{"train", {0, 10, 20}, {2.5, 2.25, 2.125}},
                                   {"validation", {20}, {2.2}}};
  EXPECT_EQ(line_chart_svg(series, {.title = "t"}), line_chart_svg(series, {.title = "t"}));
}

TEST(LineChart, MismatchedLengthsAreAnError) {
  EXPECT_THROW(line_chart_svg({{"a", {0, 1}, {0}}}, {}), Error);
}

}  // namespace
}  // namespace strata
