#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/doc/layout.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

// The tree of seed 001's Figure 2:  root ─ §1 ─ §1.1
//                                         │    └ §1.2
//                                         └ §2 ─ §2.1 ─ §2.1.1
Document figure2_document() {
  DocumentBuilder b("report");
  b.open_section("1", 1);
  b.add_paragraph("one a. one b.");
  b.open_section("1.1", 2);
  b.add_paragraph("eleven.");
  b.open_section("1.2", 2);
  b.add_paragraph("twelve.");
  b.open_section("2", 1);
  b.add_paragraph("two.");
  b.open_section("2.1", 2);
  b.add_paragraph("twenty-one.");
  b.open_section("2.1.1", 3);
  b.add_paragraph("deep.");
  return b.finish();
}

enum : int { kRoot, k1, k11, k12, k2, k21, k211 };

TEST(SectionTree, FlattensInDocumentOrder) {
  const SectionTree tree = SectionTree::from_document(figure2_document());
  ASSERT_EQ(tree.size(), 7);
  EXPECT_EQ(tree.heading, (std::vector<std::string>{"report", "1", "1.1", "1.2", "2", "2.1", "2.1.1"}));
  EXPECT_EQ(tree.parent, (std::vector<int>{-1, kRoot, k1, k1, kRoot, k2, k21}));
  EXPECT_EQ(tree.depth, (std::vector<int>{0, 1, 2, 2, 1, 2, 3}));
}

TEST(SectionTree, Figure2ParentChild) {
  const SectionTree tree = SectionTree::from_document(figure2_document());
  // "From §1 (level 1) to §1.2 (level 2), the level difference is 1 and path length is 1
  //  since §1 occurs before §1.2. When looking back from §1.2 to §1, both signs flip."
  EXPECT_EQ(tree.path_len(k1, k12), 1);
  EXPECT_EQ(tree.lvl_diff(k1, k12), 1);
  EXPECT_EQ(tree.path_len(k12, k1), -1);
  EXPECT_EQ(tree.lvl_diff(k12, k1), -1);
}

TEST(SectionTree, Figure2SiblingsAncestorsAndCousins) {
  const SectionTree tree = SectionTree::from_document(figure2_document());
  EXPECT_EQ(tree.path_len(k11, k11), 0);  // same section
  EXPECT_EQ(tree.lvl_diff(k11, k11), 0);
  EXPECT_EQ(tree.path_len(k11, k12), 2);  // siblings, key after query
  EXPECT_EQ(tree.path_len(k12, k11), -2);
  EXPECT_EQ(tree.lvl_diff(k11, k12), 0);
  EXPECT_EQ(tree.path_len(k1, k2), 2);  // top-level siblings meet at the root
  EXPECT_EQ(tree.path_len(k2, k211), 2);  // ancestor → descendant
  EXPECT_EQ(tree.lvl_diff(k2, k211), 2);
  EXPECT_EQ(tree.path_len(k211, k2), -2);
  EXPECT_EQ(tree.lvl_diff(k211, k2), -2);
  EXPECT_EQ(tree.path_len(k12, k211), 5);  // §1.2 → §1 → root → §2 → §2.1 → §2.1.1
  EXPECT_EQ(tree.lvl_diff(k12, k211), 1);
  EXPECT_EQ(tree.path_len(k211, k11), -5);
  EXPECT_EQ(tree.lowest_common_ancestor(k211, k12), kRoot);
  EXPECT_EQ(tree.lowest_common_ancestor(k211, k21), k21);
}

TEST(SectionTree, PathLenIsAntisymmetricAndLvlDiffAdditive) {
  const SectionTree tree = SectionTree::from_document(figure2_document());
  for (int x = 0; x < tree.size(); ++x)
    for (int y = 0; y < tree.size(); ++y) {
      EXPECT_EQ(tree.path_len(x, y), -tree.path_len(y, x));
      EXPECT_GE(std::abs(tree.path_len(x, y)), std::abs(tree.lvl_diff(x, y)));
      for (int z = 0; z < tree.size(); ++z)
        EXPECT_EQ(tree.lvl_diff(x, z), tree.lvl_diff(x, y) + tree.lvl_diff(y, z));
    }
}

TEST(Layout, AssignsSectionParagraphSentenceIdsPerToken) {
  test_support::WordTokenizer tokenizer;
  const Layout layout = make_layout(figure2_document(), tokenizer);
  // one a. | one b. | eleven. | twelve. | two. | twenty-one. | deep.
  ASSERT_EQ(layout.size(), 9u);
  EXPECT_EQ(layout.section, (std::vector<std::int32_t>{k1, k1, k1, k1, k11, k12, k2, k21, k211}));
  EXPECT_EQ(layout.paragraph, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(layout.position, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(tokenizer.decode(layout.token), "one a. one b. eleven. twelve. two. twenty-one. deep.");
  // Sentences are consecutive ids; the first paragraph holds two when the splitter splits it.
  EXPECT_EQ(layout.sentence.front(), 0);
  for (std::size_t i = 1; i < layout.size(); ++i) {
    const int step = layout.sentence[i] - layout.sentence[i - 1];
    EXPECT_TRUE(step == 0 || step == 1);
    if (layout.paragraph[i] != layout.paragraph[i - 1]) {
      EXPECT_EQ(step, 1);
    }
  }
}

TEST(Layout, EvenSegmentsAndSpecialTokens) {
  test_support::WordTokenizer tokenizer;
  LayoutOptions options;
  options.segments = 3;
  options.add_bos = true;
  options.add_eos = true;
  const Layout layout = make_layout(figure2_document(), tokenizer, options);
  ASSERT_EQ(layout.size(), 11u);
  EXPECT_EQ(layout.token.front(), *tokenizer.bos_id());
  EXPECT_EQ(layout.token.back(), *tokenizer.eos_id());
  EXPECT_EQ(layout.sentence.front(), -1);
  EXPECT_EQ(layout.paragraph.back(), -1);
  EXPECT_EQ(layout.section.back(), 0);
  // 11 positions in 3 segments: p * 3 / 11.
  EXPECT_EQ(layout.segment, (std::vector<std::int32_t>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2}));
}

TEST(Layout, TruncatesButKeepsEos) {
  test_support::WordTokenizer tokenizer;
  LayoutOptions options;
  options.add_eos = true;
  options.max_tokens = 4;
  const Layout layout = make_layout(figure2_document(), tokenizer, options);
  ASSERT_EQ(layout.size(), 4u);
  EXPECT_EQ(tokenizer.decode(layout.token), "one a. one </s>");
  EXPECT_EQ(layout.tree.size(), 7);  // the tree is whole even when tokens are cut
}

TEST(Layout, RejectsBadOptions) {
  test_support::WordTokenizer tokenizer;
  LayoutOptions options;
  options.segments = 0;
  EXPECT_THROW(make_layout(figure2_document(), tokenizer, options), Error);
}

TEST(Layout, EmptyDocumentHasOnlyTheRoot) {
  test_support::WordTokenizer tokenizer;
  const Layout layout = make_layout(DocumentBuilder("empty").finish(), tokenizer);
  EXPECT_EQ(layout.size(), 0u);
  EXPECT_EQ(layout.tree.size(), 1);
}

}  // namespace
}  // namespace strata
