#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/attn/token_layout.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata::attn {
namespace {

Layout tree_layout(const test_support::WordTokenizer& tokenizer) {
  DocumentBuilder b("doc");
  b.open_section("A", 1);
  b.add_paragraph("alpha beta.");
  b.open_section("A.1", 2);
  b.add_paragraph("gamma.");
  b.open_section("B", 1);
  b.add_paragraph("delta epsilon zeta.");
  LayoutOptions options;
  options.segments = 2;
  return make_layout(b.finish(), tokenizer, options);
}

Layout short_layout(const test_support::WordTokenizer& tokenizer) {
  DocumentBuilder b("short");
  b.open_section("Only", 1);
  b.add_paragraph("one two one three");
  return make_layout(b.finish(), tokenizer);
}

std::vector<std::int32_t> row(const at::Tensor& t, std::int64_t b) {
  const at::Tensor r = t[b].contiguous();
  return {r.data_ptr<std::int32_t>(), r.data_ptr<std::int32_t>() + r.numel()};
}

TEST(TokenLayout, BatchesLayoutsWithPaddingAndTreeRelations) {
  test_support::WordTokenizer tokenizer;
  const Layout first = tree_layout(tokenizer), second = short_layout(tokenizer);
  ASSERT_GT(first.size(), second.size());
  const TokenLayout t = batch_layouts({&first, &second});
  const auto length = static_cast<std::int64_t>(first.size());
  EXPECT_EQ(t.batch(), 2);
  EXPECT_EQ(t.length(), length);
  EXPECT_EQ(t.section.dtype(), torch::kInt32);
  EXPECT_EQ(t.token.sizes(), (std::vector<std::int64_t>{2, length}));

  EXPECT_EQ(row(t.section, 0), first.section);
  EXPECT_EQ(row(t.paragraph, 0), first.paragraph);
  EXPECT_EQ(row(t.sentence, 0), first.sentence);
  EXPECT_EQ(row(t.segment, 0), first.segment);
  EXPECT_EQ(row(t.token, 0), first.token);
  EXPECT_EQ(row(t.document, 0), std::vector<std::int32_t>(length, 0));
  EXPECT_EQ(first.segment.back(), 1);  // two segments

  // Item 1: "one two one three", then padding.
  const std::size_t real = second.size();
  std::vector<std::int32_t> token = second.token, repeated = {1, 0, 1, 0};
  std::vector<std::int32_t> sentence = second.sentence, section = second.section;
  token.resize(length, -1);
  repeated.resize(length, 0);
  sentence.resize(length, -1);
  section.resize(length, 0);
  EXPECT_EQ(row(t.token, 1), token);
  EXPECT_EQ(row(t.repeated, 1), repeated);
  EXPECT_EQ(row(t.sentence, 1), sentence);
  EXPECT_EQ(row(t.paragraph, 1), sentence);  // one paragraph, one sentence: both 0, then -1
  EXPECT_EQ(row(t.section, 1), section);
  EXPECT_EQ(row(t.segment, 1), std::vector<std::int32_t>(length, 0));
  EXPECT_EQ(real, 4u);

  // Relations at section level, padded to the most sections (4: root, A, A.1, B).
  ASSERT_EQ(t.path_len.sizes(), (std::vector<std::int64_t>{2, 4, 4}));
  const at::Tensor p = t.path_len[0], l = t.lvl_diff[0];
  EXPECT_TRUE(torch::equal(p + p.t(), torch::zeros({4, 4}, torch::kInt32)));  // antisymmetric
  EXPECT_TRUE(torch::equal(l + l.t(), torch::zeros({4, 4}, torch::kInt32)));
  EXPECT_EQ(p[2][3].item<std::int32_t>(), 3);  // A.1 -> A -> root -> B
  EXPECT_EQ(l[2][3].item<std::int32_t>(), -1);
  EXPECT_EQ(t.path_len[1][0][1].item<std::int32_t>(), 1);
  EXPECT_EQ(t.path_len[1].narrow(0, 2, 2).abs().sum().item<std::int64_t>(), 0);
  // A token pair's relation is a gather by the tokens' section ids; no L × L table is stored.
  const at::Tensor s = t.section[0].to(torch::kLong);
  const at::Tensor pair = p.index({s.unsqueeze(1), s.unsqueeze(0)});
  EXPECT_EQ(pair.sizes(), (std::vector<std::int64_t>{length, length}));
  EXPECT_EQ(pair[0][length - 1].item<std::int32_t>(),
            first.tree.path_len(first.section[0], first.section.back()));
}

TEST(TokenLayout, ExplicitLength) {
  test_support::WordTokenizer tokenizer;
  const Layout first = tree_layout(tokenizer), second = short_layout(tokenizer);
  const TokenLayout t = batch_layouts({&second}, 6);
  EXPECT_EQ(t.length(), 6);
  EXPECT_EQ(row(t.token, 0).back(), -1);
  EXPECT_EQ(
      test_support::error_of([&] {
        batch_layouts({&second, &first}, 5);
      }),
      "batch_layouts: item 1 has " + std::to_string(first.size()) +
          " tokens, more than the batch length 5 (truncate it with LayoutOptions::max_tokens)");
  EXPECT_EQ(TokenLayout{}.batch(), 0);
}

// Beam search reorders the items of an encoded batch: every per-item field follows, the task
// ids included; a field shared by the batch (size 1) stays as it is.
TEST(TokenLayout, SelectItemsCarriesTaskIds) {
  test_support::WordTokenizer tokenizer;
  const Layout first = tree_layout(tokenizer), second = short_layout(tokenizer);
  TokenLayout t = batch_layouts({&first, &second});
  EXPECT_FALSE(t.task.defined());
  t.task = torch::tensor({0, 2}, torch::kInt32).unsqueeze(1).expand({2, t.length()}).contiguous();
  t.document = torch::zeros({1, t.length()}, torch::kInt32);
  const TokenLayout picked = select_items(t, torch::tensor({1, 1, 0}, torch::kInt64));
  EXPECT_EQ(picked.batch(), 3);
  EXPECT_EQ(row(picked.task, 0), std::vector<std::int32_t>(static_cast<std::size_t>(t.length()), 2));
  EXPECT_EQ(row(picked.task, 2), std::vector<std::int32_t>(static_cast<std::size_t>(t.length()), 0));
  EXPECT_EQ(row(picked.token, 1), row(t.token, 1));
  EXPECT_EQ(picked.document.size(0), 1);
  TokenLayout tasks_only;
  tasks_only.task = torch::zeros({4, 7}, torch::kInt32);
  EXPECT_EQ(tasks_only.batch(), 4);
  EXPECT_EQ(tasks_only.length(), 7);
}

}  // namespace
}  // namespace strata::attn
