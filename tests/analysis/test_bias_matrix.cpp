// The bias matrix behind `strata analyze biases` (seed 001 Figure 5): cells hand-checked on
// the figure's example tree, for HIBRIDS, its Table 4 ablations and HIBRIDS_S.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <numeric>

#include "strata/analysis/bias_matrix.h"
#include "strata/core/error.h"
#include "support/expect.h"

namespace strata::analysis {
namespace {

using attn::Relation;
using attn::RelationKind;
using attn::SelectedRelation;
using attn::relation_count;
using attn::selected_relation_name;
using test_support::error_of;

// Figure 5's rows/columns: §1(0) §1.1(1) §1.1.1(2) §1.1.1.1(3) §1.2(4) §2(5) §2.1(6).
enum Row { S1, S11, S111, S1111, S12, S2, S21 };

// A table whose entry id holds id itself, so that a cell's value names the entry it read.
std::vector<float> identity_table(const Relation& r) {
  std::vector<float> table(static_cast<std::size_t>(relation_count(r)));
  std::iota(table.begin(), table.end(), 0.0f);
  return table;
}

BiasMatrix identity_matrix(const Relation& r) { return bias_matrix(r, identity_table(r), figure5_tree()); }

TEST(BiasMatrix, Figure5TreeIsTheFiguresStructure) {
  const SectionTree tree = figure5_tree();
  ASSERT_EQ(tree.size(), 8);
  EXPECT_EQ(tree.path_len(4, 2), -2);  // §1.1.1.1 to §1.1
  EXPECT_EQ(tree.path_len(5, 2), -2);  // §1.2 to §1.1: siblings
  EXPECT_EQ(tree.path_len(4, 7), 6);   // §1.1.1.1 to §2.1, through the root
  const BiasMatrix m = identity_matrix({.kind = RelationKind::Hibrids});
  EXPECT_EQ(m.sections, (std::vector<std::string>{"1", "1.1", "1.1.1", "1.1.1.1", "1.2", "2", "2.1"}));
  EXPECT_EQ(m.size(), 7);
  EXPECT_EQ(m.values.size(), 49u);
}

TEST(BiasMatrix, HibridsCellsReadTheirPathLenAndLvlDiffEntry) {
  // max_path 4, max_level 2: id = (PathLen + 4) * 5 + LvlDiff + 2.
  const BiasMatrix m = identity_matrix({.kind = RelationKind::Hibrids});
  EXPECT_EQ(m.at(S11, S1), 16.0f);  // (-1, -1)
  EXPECT_EQ(m.label(S11, S1), "(-1, -1)");
  EXPECT_EQ(m.at(S1111, S11), 10.0f);  // (-2, -2)
  EXPECT_EQ(m.label(S1111, S11), "(-2, -2)");
  EXPECT_EQ(m.at(S12, S11), 12.0f);  // preceding sibling (-2, 0)
  EXPECT_EQ(m.at(S1, S11), 28.0f);   // child (1, 1)
  EXPECT_EQ(m.at(S1, S12), 28.0f);   // the other child: the same entry
  EXPECT_EQ(m.at(S2, S2), 22.0f);    // self (0, 0)
  for (int x = 0; x < 7; ++x) EXPECT_EQ(m.label(x, x), "(0, 0)");
  // §1.1.1.1 to §2.1: PathLen 6 clamps to 4, LvlDiff -2: (8) * 5 + 0, at the table's edge.
  EXPECT_EQ(m.at(S1111, S21), 40.0f);
  EXPECT_EQ(m.label(S1111, S21), "(4, -2)");
  EXPECT_TRUE(m.clamped[S1111 * 7 + S21]);
  EXPECT_EQ(m.at(S21, S1111), 4.0f);  // (-4, 2) after clamping (-6, 2)
  EXPECT_FALSE(m.clamped[S11 * 7 + S1]);
  EXPECT_EQ(m.ids[S11 * 7 + S1], 16);
}

TEST(BiasMatrix, HibridsAblationsShareEntries) {
  Relation no_path{.kind = RelationKind::Hibrids};
  no_path.path = false;  // id = LvlDiff + 2
  const BiasMatrix a = identity_matrix(no_path);
  EXPECT_EQ(a.at(S11, S1), 1.0f);
  EXPECT_EQ(a.label(S11, S1), "(*, -1)");
  EXPECT_EQ(a.at(S12, S11), 2.0f);
  EXPECT_EQ(a.at(S12, S11), a.at(S1, S2));  // every LvlDiff-0 pair alike

  Relation no_level{.kind = RelationKind::Hibrids};
  no_level.level = false;  // id = PathLen + 4
  const BiasMatrix b = identity_matrix(no_level);
  EXPECT_EQ(b.at(S11, S1), 3.0f);
  EXPECT_EQ(b.label(S11, S1), "(-1, *)");
  EXPECT_EQ(b.at(S1111, S21), 8.0f);
  EXPECT_EQ(b.label(S1111, S21), "(4, *)");

  Relation symmetric{.kind = RelationKind::Hibrids};
  symmetric.asymmetric = false;  // id = min(|PathLen|, 4) * 5 + LvlDiff + 2
  const BiasMatrix c = identity_matrix(symmetric);
  EXPECT_EQ(c.at(S11, S1), 6.0f);
  EXPECT_EQ(c.label(S11, S1), "(±1, -1)");
  EXPECT_EQ(c.at(S1, S11), 8.0f);
  EXPECT_EQ(c.label(S1, S11), "(±1, 1)");
  EXPECT_EQ(c.at(S12, S11), c.at(S11, S12));  // siblings both ways: (±2, 0)
  EXPECT_EQ(c.label(S2, S2), "(0, 0)");

  const Relation small{.kind = RelationKind::Hibrids, .max_path = 1, .max_level = 0};
  const BiasMatrix d = identity_matrix(small);  // 3 entries: PathLen -1, 0, 1
  EXPECT_EQ(d.at(S1111, S1), 0.0f);
  EXPECT_EQ(d.label(S1111, S1), "(-1, 0)");
  EXPECT_TRUE(d.clamped[S1111 * 7 + S1]);
}

TEST(BiasMatrix, SelectedCellsReadTheirRelationsEntry) {
  using R = SelectedRelation;
  const BiasMatrix m = identity_matrix({.kind = RelationKind::HibridsSelected});
  auto expect = [&](int x, int y, R want) {
    EXPECT_EQ(m.at(x, y), static_cast<float>(want)) << m.sections[x] << " -> " << m.sections[y];
    EXPECT_EQ(m.label(x, y), selected_relation_name(want));
  };
  expect(S11, S1, R::Parent);
  expect(S1, S11, R::Child);
  expect(S1111, S11, R::Ancestor);
  expect(S1, S1111, R::Descendant);
  expect(S12, S11, R::PrecedingSibling);
  expect(S1, S2, R::FollowingSibling);
  expect(S2, S12, R::PreviousInText);
  expect(S12, S2, R::NextInText);
  expect(S1111, S12, R::NextInText);
  expect(S111, S12, R::SameTopLevel);
  expect(S11, S21, R::Other);
  expect(S21, S21, R::Self);
  EXPECT_EQ(std::count(m.clamped.begin(), m.clamped.end(), 1), 0);
}

TEST(BiasMatrix, LabelsCoverEveryId) {
  const Relation full{.kind = RelationKind::Hibrids, .max_path = 1, .max_level = 1};
  EXPECT_EQ(relation_labels(full),
            (std::vector<std::string>{"(-1, -1)", "(-1, 0)", "(-1, 1)", "(0, -1)", "(0, 0)", "(0, 1)",
                                      "(1, -1)", "(1, 0)", "(1, 1)"}));
  EXPECT_EQ(relation_labels({.kind = RelationKind::HibridsSelected}).size(), 11u);
  EXPECT_EQ(relation_labels({.kind = RelationKind::HibridsSelected}).back(), "same_top_level");
  EXPECT_EQ(relation_label({.kind = RelationKind::T5Buckets}, 3), "bucket 3");
  EXPECT_NE(error_of([&] { relation_label(full, 9); }).find("outside"), std::string::npos);
  EXPECT_EQ(relation_description(full), "hibrids(max_path=1, max_level=1)");
  Relation ablated = full;
  ablated.level = false;
  ablated.asymmetric = false;
  EXPECT_EQ(relation_description(ablated), "hibrids(max_path=1, max_level=1, no level, symmetric path)");
  EXPECT_EQ(relation_description({.kind = RelationKind::HibridsSelected}), "hibrids_selected");
}

TEST(BiasMatrix, RefusesWhatItCannotDraw) {
  const SectionTree tree = figure5_tree();
  const std::vector<float> four(4, 0.0f);
  EXPECT_NE(error_of([&] { bias_matrix({.kind = RelationKind::T5Buckets}, four, tree); })
                .find("tree relation"),
            std::string::npos);
  EXPECT_NE(error_of([&] { bias_matrix({.kind = RelationKind::Hibrids}, four, tree); })
                .find("has 4 entries, expected relation_count = 45"),
            std::string::npos);
  SectionTree root_only;
  root_only.parent = {-1};
  root_only.depth = {0};
  const std::vector<float> eleven(11, 0.0f);
  EXPECT_NE(error_of([&] { bias_matrix({.kind = RelationKind::HibridsSelected}, eleven, root_only); })
                .find("at least one section"),
            std::string::npos);
}

TEST(BiasMatrix, JsonHoldsRawValuesRelationsAndTheTable) {
  const Relation r{.kind = RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  std::vector<float> table(static_cast<std::size_t>(relation_count(r)), 0.0f);
  table[3] = 0.25f;  // (-1, -1): parent
  const auto j = to_json(bias_matrix(r, table, figure5_tree()));
  EXPECT_EQ(j["relation"]["kind"], "hibrids");
  EXPECT_EQ(j["relation"]["max_path"], 2);
  EXPECT_EQ(j["sections"][3], "1.1.1.1");
  EXPECT_EQ(j["values"][S11][S1], 0.25);
  EXPECT_EQ(j["values"][S1][S11], 0.0);
  EXPECT_EQ(j["relations"][S11][S1], "(-1, -1)");
  EXPECT_EQ(j["ids"][S11][S1], 3);
  EXPECT_EQ(j["table"].size(), 15u);
  EXPECT_EQ(j["table"][3]["relation"], "(-1, -1)");
  EXPECT_EQ(j["table"][3]["value"], 0.25);
  // §1.1.1.1 to §1: PathLen -3 and LvlDiff -3 both clamp.
  bool found = false;
  for (const auto& cell : j["clamped"]) found = found || (cell[0] == S1111 && cell[1] == S1);
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace strata::analysis
