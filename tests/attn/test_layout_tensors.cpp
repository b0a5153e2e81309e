#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/attn/layout_tensors.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

TEST(LayoutTensors, MirrorLayoutAndTreeRelations) {
  DocumentBuilder b("doc");
  b.open_section("A", 1);
  b.add_paragraph("alpha beta.");
  b.open_section("A.1", 2);
  b.add_paragraph("gamma.");
  b.open_section("B", 1);
  b.add_paragraph("delta epsilon zeta.");
  const Document document = b.finish();
  test_support::WordTokenizer tokenizer;
  LayoutOptions options;
  options.segments = 2;
  const Layout layout = make_layout(document, tokenizer, options);
  const LayoutTensors t = to_tensors(layout);

  ASSERT_EQ(t.section.numel(), static_cast<std::int64_t>(layout.size()));
  EXPECT_EQ(t.section.dtype(), torch::kInt64);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    EXPECT_EQ(t.section[i].item<std::int64_t>(), layout.section[i]);
    EXPECT_EQ(t.segment[i].item<std::int64_t>(), layout.segment[i]);
    EXPECT_EQ(t.token[i].item<std::int64_t>(), layout.token[i]);
  }
  ASSERT_EQ(t.path_len.sizes(), (std::vector<std::int64_t>{4, 4}));
  // PathLen is antisymmetric: P + Pᵀ == 0; LvlDiff too.
  EXPECT_TRUE(torch::equal(t.path_len + t.path_len.t(), torch::zeros({4, 4}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(t.lvl_diff + t.lvl_diff.t(), torch::zeros({4, 4}, torch::kInt64)));
  EXPECT_EQ(t.path_len[2][3].item<std::int64_t>(), 3);  // A.1 → A → root → B
  EXPECT_EQ(t.lvl_diff[2][3].item<std::int64_t>(), -1);
  // Gathering by token section ids gives the token-pair relation without an L × L table
  // being stored anywhere but here.
  const auto pair = t.path_len.index({t.section.unsqueeze(1), t.section.unsqueeze(0)});
  EXPECT_EQ(pair.size(0), static_cast<std::int64_t>(layout.size()));
}

}  // namespace
}  // namespace strata
