// The analyses' figure writers, read back pixel by pixel: the PNG encoder, the heatmap of
// `strata analyze heads|patterns`, the bias figure of `strata analyze biases`, the attention
// maps of `strata analyze attention` and the mask pictures of `strata attn show`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "png_reader.h"
#include "strata/analysis/attention_figure.h"
#include "strata/analysis/bias_figure.h"
#include "strata/analysis/bias_matrix.h"
#include "strata/analysis/heatmap_figure.h"
#include "strata/analysis/mask_image.h"
#include "strata/analysis/png.h"
#include "strata/attn/spec.h"
#include "strata/core/error.h"
#include "support/expect.h"

namespace strata::analysis {
namespace {

using test_support::count_occurrences;
using test_support::decode_png;
using test_support::error_of;

TEST(Png, WritesPaletteIndicesRowByRow) {
  const std::vector<Rgb> palette{{255, 0, 0}, {0, 128, 255}};
  const std::vector<std::uint8_t> pixels{0, 1, 0, 1, 1, 0};
  const auto png = decode_png(encode_png(3, 2, palette, pixels));
  EXPECT_EQ(png.chunks, (std::vector<std::string>{"IHDR", "PLTE", "IDAT", "IEND"}));
  EXPECT_EQ(png.width, 3u);
  EXPECT_EQ(png.height, 2u);
  EXPECT_EQ(png.depth, 8);
  EXPECT_EQ(png.colour_type, 3);
  EXPECT_EQ(png.palette, palette);
  EXPECT_EQ(png.pixels, pixels);
}

TEST(Png, RefusesWhatItCannotEncode) {
  const std::vector<Rgb> two{{0, 0, 0}, {255, 255, 255}};
  const std::vector<std::uint8_t> outside{0, 2};
  EXPECT_NE(error_of([&] { encode_png(2, 1, two, outside); }).find("outside the palette"), std::string::npos);
  const std::vector<std::uint8_t> three{0, 1, 0};
  EXPECT_NE(error_of([&] { encode_png(2, 1, two, three); }).find("does not match"), std::string::npos);
  EXPECT_NE(error_of([&] { encode_png(2, 1, {}, outside); }).find("1 to 256"), std::string::npos);
  EXPECT_NE(error_of([&] { encode_png(0, 1, two, {}); }).find("positive"), std::string::npos);
}

// Two layers, the second one head short; the largest value (1.0) is the darkest shade, 0 the
// lightest, and (0, 2) is framed.
Heatmap small_heatmap() {
  Heatmap h;
  h.title = "importance";
  h.rows = {"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"};
  h.values = {{0.0, 0.5, 1.0}, {0.25}};
  h.legend = "taylor";
  h.outlined = {{0, 2}};
  return h;
}

TEST(Heatmap, PngShadesCellsByValueOnAGrid) {
  const auto png = decode_png(heatmap_png(small_heatmap()));
  ASSERT_EQ(png.width, 3u * 32 + 1);
  ASSERT_EQ(png.height, 2u * 20 + 1);
  ASSERT_EQ(png.palette.size(), 67u);  // 64 shades, grid, outline, empty
  EXPECT_EQ(png.at(0, 0), 64);         // grid
  EXPECT_EQ(png.at(16, 10), 0);        // 0.0: white
  EXPECT_EQ(png.at(48, 10), 32);       // 0.5: lround(31.5)
  EXPECT_EQ(png.at(80, 10), 63);       // 1.0: the darkest
  EXPECT_EQ(png.at(65, 1), 65);        // the frame of (0, 2)
  EXPECT_EQ(png.at(16, 30), 16);       // 0.25: lround(15.75)
  EXPECT_EQ(png.at(48, 30), 66);       // layer 1 has no head 2
  EXPECT_EQ(png.palette[63], (Rgb{8, 48, 107}));
}

TEST(Heatmap, SvgHasACellPerHeadWithItsValue) {
  const std::string svg = heatmap_svg(small_heatmap());
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count_occurrences(svg, "<g><title>"), 4u);
  EXPECT_NE(svg.find(">0.500</text>"), std::string::npos);
  EXPECT_NE(svg.find("encoder.layers.1.self_attn head 1: 0.25"), std::string::npos);
  EXPECT_EQ(count_occurrences(svg, "stroke-width=\"2.5\""), 1u);  // the one framed cell
  EXPECT_EQ(svg, heatmap_svg(small_heatmap()));
}

// HIBRIDS_S on seed 001 Figure 5's tree, parent 0.5 and child -0.25, every other entry 0.
BiasMatrix parent_child_matrix() {
  const attn::Relation relation{.kind = attn::RelationKind::HibridsSelected};
  std::vector<float> table(static_cast<std::size_t>(attn::relation_count(relation)), 0.0f);
  table[static_cast<std::size_t>(attn::SelectedRelation::Parent)] = 0.5f;
  table[static_cast<std::size_t>(attn::SelectedRelation::Child)] = -0.25f;
  return bias_matrix(relation, table, figure5_tree());
}

TEST(BiasFigure, HundredfoldNeverPrintsMinusZero) {
  EXPECT_EQ(hundredfold(0.01234f), "1.2");
  EXPECT_EQ(hundredfold(-0.5f), "-50.0");
  EXPECT_EQ(hundredfold(-0.0001f), "0.0");
}

TEST(BiasFigure, PngIsBlueForPositiveAndOrangeForNegative) {
  const auto png = decode_png(bias_png(parent_child_matrix()));
  ASSERT_EQ(png.width, 7u * 32 + 1);  // Figure 5's seven sections
  ASSERT_EQ(png.height, png.width);
  ASSERT_EQ(png.palette.size(), 128u);
  // Cell (query x, key y) is at column y, row x. §1.1 (1) to §1 (0): parent, the largest |value|.
  EXPECT_EQ(png.at(0 * 32 + 16, 1 * 32 + 16), 63);
  // §1 to §1.1: child, half as large and negative: orange shade lround(31.5).
  EXPECT_EQ(png.at(1 * 32 + 16, 0 * 32 + 16), 63 + 32);
  EXPECT_EQ(png.at(16, 16), 0);  // self: 0
  EXPECT_EQ(png.at(0, 0), 127);  // grid
  EXPECT_EQ(png.palette[63], (Rgb{33, 102, 172}));
}

TEST(BiasFigure, SvgPrintsValuesTimesAHundred) {
  const std::string svg = bias_svg(parent_child_matrix(), "HIBRIDS-ENC");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">50.0<"), std::string::npos);
  EXPECT_NE(svg.find(">-25.0<"), std::string::npos);
  EXPECT_NE(svg.find("§1.1.1.1"), std::string::npos);
  EXPECT_EQ(svg, bias_svg(parent_child_matrix(), "HIBRIDS-ENC"));
}

TEST(AttentionFigure, PngDrawsPanelsSideBySideWithTheSeparator) {
  AttentionPanel panel{.title = "doc", .rows = 2, .cols = 3, .prefix_length = 1, .values = {0, 0.5, 1, 1, 0.5, 0}};
  AttentionFigure figure{.title = "layer 0", .legend = "", .panels = {panel, panel}};
  const auto png = decode_png(attention_png(figure));
  // 24 px a cell (320 / 3 is more than the 24 at most), a 1-px frame, a separator column.
  const std::uint32_t panel_width = 3 * 24 + 1 + 2;
  ASSERT_EQ(png.width, 2 * panel_width + 16);
  ASSERT_EQ(png.height, 2u * 24 + 2);
  EXPECT_EQ(png.at(0, 0), 65);   // frame
  EXPECT_EQ(png.at(10, 10), 0);  // (0, 0): the smallest weight
  EXPECT_EQ(png.at(25, 10), 64);  // the separator after the one prefix column
  EXPECT_EQ(png.at(30, 10), 32);  // (0, 1): 0.5
  EXPECT_EQ(png.at(60, 10), 63);  // (0, 2): the largest
  EXPECT_EQ(png.at(panel_width + 8, 10), 0);  // the gap is white
  EXPECT_EQ(png.at(panel_width + 16 + 60, 10), 63);
}

TEST(AttentionFigure, SvgEmbedsEachPanel) {
  AttentionPanel panel{.title = "doc-7", .rows = 2, .cols = 2, .prefix_length = 0, .values = {0.25, 0.75, 0.5, 0.5}};
  const AttentionFigure figure{.title = "layer 1", .legend = "mean over heads", .panels = {panel}};
  const std::string svg = attention_svg(figure);
  EXPECT_EQ(count_occurrences(svg, "data:image/png;base64,"), 1u);
  EXPECT_NE(svg.find("doc-7"), std::string::npos);
  EXPECT_EQ(svg, attention_svg(figure));
}

// Rows 0 and 1 see keys 1-2 and 4, row 2 sees all 5; a line above row 2 and left of key 4.
MaskImage small_mask() {
  MaskImage image{.rows = 3, .cols = 5, .row_lines = {2}, .col_lines = {4}, .title = "head 0"};
  const std::uint8_t band[] = {0, 1, 1, 0, 1}, all[] = {1, 1, 1, 1, 1};
  image.add_row(band);
  image.add_row(band);
  image.add_row(all);
  return image;
}

TEST(MaskImage, RowsAreStoredAsRuns) {
  const MaskImage image = small_mask();
  ASSERT_EQ(image.runs.size(), 3u);
  ASSERT_EQ(image.runs[0].size(), 2u);
  EXPECT_EQ(image.runs[0][0].begin, 1);
  EXPECT_EQ(image.runs[0][0].end, 3);
  EXPECT_EQ(image.runs[0][1].begin, 4);
  EXPECT_EQ(image.runs[0][1].end, 5);
  ASSERT_EQ(image.runs[2].size(), 1u);
  EXPECT_EQ(image.runs[2][0].end, 5);
}

TEST(MaskImage, SvgSharesRectsAcrossEqualRows) {
  const std::string svg = mask_svg(small_mask());
  EXPECT_EQ(count_occurrences(svg, "<rect "), 4u);  // background, 2 for rows 0-1, 1 for row 2
  EXPECT_NE(svg.find("<rect x=\"1\" y=\"0\" width=\"2\" height=\"2\"/>"), std::string::npos);
  EXPECT_EQ(count_occurrences(svg, "<line "), 2u);
}

TEST(MaskImage, PngHasAPixelPerPairWithLinesTinted) {
  const auto png = decode_png(mask_png(small_mask()));
  ASSERT_EQ(png.width, 5u);
  ASSERT_EQ(png.height, 3u);
  EXPECT_EQ(png.at(0, 0), 0);  // hidden
  EXPECT_EQ(png.at(1, 0), 1);  // visible
  EXPECT_EQ(png.at(4, 0), 3);  // visible, on the key line
  EXPECT_EQ(png.at(3, 1), 0);
  EXPECT_EQ(png.at(0, 2), 3);  // visible, on the row line
}

}  // namespace
}  // namespace strata::analysis
