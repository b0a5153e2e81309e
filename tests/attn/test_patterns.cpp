// Seed 003's patterns: each predicate against a hand-drawn matrix on a small layout, their
// injection as head specs, and the sparsity of an injected layer.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "strata/attn/attention_call.h"
#include "strata/attn/patterns.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

using test_support::error_of;

at::Tensor pattern_ids(std::vector<std::int32_t> values) { return torch::tensor(values, torch::kInt32).view({1, -1}); }

// Six tokens: "a b a . c a", two sentences, left / right context split after token 3.
TokenLayout six_tokens() {
  TokenLayout layout;
  layout.token = pattern_ids({5, 6, 5, 9, 7, 5});
  layout.repeated = pattern_ids({1, 0, 1, 0, 0, 1});
  layout.sentence = pattern_ids({0, 0, 0, 0, 1, 1});
  layout.segment = pattern_ids({0, 0, 0, 0, 1, 1});
  return layout;
}

// The predicate of `name` drawn as rows of 0/1 (row = query i, column = key j).
std::vector<std::string> drawn(const std::string& name, const PatternSet& set = PatternSet()) {
  const TokenLayout layout = six_tokens();
  PatternInputs inputs{&layout, pattern_ids({1, 0, 0, 2, 0, 0})};  // token 0 special, token 3 punctuation
  const at::Tensor p = pattern_predicate(set.find(name), inputs);
  EXPECT_EQ(p.sizes(), (at::IntArrayRef{1, 6, 6}));
  std::vector<std::string> rows;
  for (std::int64_t i = 0; i < 6; ++i) {
    std::string row;
    for (std::int64_t j = 0; j < 6; ++j) row += p[0][i][j].item<bool>() ? '1' : '0';
    rows.push_back(row);
  }
  return rows;
}

using Rows = std::vector<std::string>;

TEST(Patterns, PredicatesMatchHandDrawnMatrices) {
  // Only tokens seen more than once count (seed 003 §4.2.2): rows 1, 3, 4 are empty.
  EXPECT_EQ(drawn("matching_token"), (Rows{"101001", "000000", "101001", "000000", "000000", "101001"}));
  EXPECT_EQ(drawn("intra_sentence"), (Rows{"111100", "111100", "111100", "111100", "000011", "000011"}));
  EXPECT_EQ(drawn("intra_context"), drawn("intra_sentence"));
  EXPECT_EQ(drawn("previous_token"), (Rows{"000000", "100000", "010000", "001000", "000100", "000010"}));
  EXPECT_EQ(drawn("next_token"), (Rows{"010000", "001000", "000100", "000010", "000001", "000000"}));
  EXPECT_EQ(drawn("special_token"), Rows(6, "100000"));
  EXPECT_EQ(drawn("punctuation"), Rows(6, "000100"));
}

TEST(Patterns, UserDefinitionsComposeByName) {
  PatternSet set;
  set.define(nlohmann::json::parse(R"json({"local": "previous_token | next_token",
                                           "inner": "intra_sentence & !(local | matching_token)"})json"));
  EXPECT_EQ(drawn("local", set), (Rows{"010000", "101000", "010100", "001010", "000101", "000010"}));
  EXPECT_EQ(drawn("inner", set), (Rows{"000100", "010100", "000000", "110100", "000010", "000000"}));
  EXPECT_EQ(set.names().back(), "inner");
  // Injected as the same composition of masks.
  EXPECT_EQ(to_string(pattern_head(set.find("local")).mask),
            "window(1,0) & !window(0,0) | window(0,1) & !window(0,0)");
}

TEST(Patterns, BadNamesAndDefinitionsAreClearErrors) {
  PatternSet set;
  std::string message = error_of([&] { set.find("intra_sentense"); });
  EXPECT_NE(message.find("did you mean 'intra_sentence'"), std::string::npos) << message;
  EXPECT_NE(message.find("known patterns: matching_token, intra_sentence, intra_context, previous_token, "
                         "next_token, special_token, punctuation"), std::string::npos) << message;
  message = error_of([&] { set.define(nlohmann::json::parse(R"({"x": "previous_token &"})")); });
  EXPECT_NE(message.find("pattern definition 'x': expected a pattern name"), std::string::npos) << message;
  message = error_of([&] { set.define(nlohmann::json::parse(R"({"next_token": "previous_token"})")); });
  EXPECT_NE(message.find("the name is taken"), std::string::npos) << message;
  message = error_of([&] { pattern_predicate(set.find("special_token"), PatternInputs{nullptr, {}}); });
  EXPECT_NE(message.find("special_token needs token classes"), std::string::npos) << message;
}

TEST(Patterns, InjectionGivesMasksOrFixedHeads) {
  const PatternSet set;
  EXPECT_EQ(pattern_head(set.find("matching_token")).mask.kind, MaskKind::MatchingToken);
  EXPECT_EQ(pattern_head(set.find("intra_sentence")).mask.kind, MaskKind::SameSentence);
  EXPECT_EQ(pattern_head(set.find("intra_context")).mask.kind, MaskKind::SameSegment);
  EXPECT_EQ(pattern_head(set.find("previous_token")).fixed, FixedPattern::PreviousToken);
  EXPECT_EQ(pattern_head(set.find("next_token")).fixed, FixedPattern::NextToken);
  EXPECT_FALSE(injectable(set.find("punctuation")));

  const std::vector<Pattern> four = set.parse_list("matching_token, intra_sentence,previous_token,next_token");
  const LayerSpec spec = inject_patterns(four, 6, 8);
  ASSERT_EQ(spec.heads.size(), 8u);
  EXPECT_EQ(spec.heads[4], spec.heads[0]);
  EXPECT_EQ(spec.heads[5], spec.heads[1]);
  EXPECT_EQ(spec.heads[6], HeadSpec{});
  EXPECT_TRUE(inject_patterns(four, 0, 8).is_plain());
  const std::string message = error_of([&] { inject_patterns(four, 9, 8); });
  EXPECT_NE(message.find("9 of 8 heads"), std::string::npos) << message;
}

TEST(Patterns, FixedHeadsCopyExactlyTheirNeighbour) {
  const PatternSet set;
  const LayerSpec spec = inject_patterns(set.parse_list("previous_token,next_token"), 2, 2);
  const TokenLayout layout = six_tokens();
  torch::manual_seed(3);
  for (Kernel kernel : {Kernel::Reference, Kernel::Fused}) {
    AttentionCall call;
    call.q = torch::randn({1, 2, 6, 4});
    call.k = torch::randn({1, 2, 6, 4});
    call.v = torch::randn({1, 2, 6, 4});
    call.spec = &spec;
    call.query_layout = &layout;
    call.key_layout = &layout;
    const at::Tensor out = attend(call, kernel);
    const at::Tensor v = call.v[0];
    EXPECT_TRUE(out[0][0][0].eq(0).all().item<bool>());  // the first token has no previous one
    EXPECT_TRUE(out[0][0].narrow(0, 1, 5).equal(v[0].narrow(0, 0, 5)));
    EXPECT_TRUE(out[0][1].narrow(0, 0, 5).equal(v[1].narrow(0, 1, 5)));
    EXPECT_TRUE(out[0][1][5].eq(0).all().item<bool>());
  }
}

// The fused kernel runs matching_token heads with the tokens in sorted order (so that tiles can
// be skipped) and the other heads as they are: outputs and gradients must stay the reference's.
TEST(Patterns, MatchingHeadsInTokenOrderGiveTheReferenceNumbers) {
  torch::manual_seed(5);
  const std::int64_t batch = 2, heads = 4, length = 50;
  TokenLayout layout;
  layout.token = torch::randint(0, 12, {batch, length}, torch::kInt32);
  layout.sentence = (torch::arange(length, torch::kInt32) / 7).expand({batch, length}).contiguous();
  layout.repeated = torch::zeros({batch, length}, torch::kInt32);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < length; ++i)
      layout.repeated[b][i] = (layout.token[b] == layout.token[b][i]).sum().item<std::int64_t>() > 1 ? 1 : 0;
  LayerSpec spec;
  spec.heads = {HeadSpec{Mask::of(MaskKind::MatchingToken)}, HeadSpec{}, HeadSpec{Mask::of(MaskKind::SameSentence)},
                HeadSpec{Mask::of(MaskKind::MatchingToken)}};
  at::Tensor padding = torch::ones({batch, length}, torch::kBool);
  padding[1].narrow(0, 40, 10).fill_(false);
  std::vector<at::Tensor> outputs, grads;
  for (Kernel kernel : {Kernel::Reference, Kernel::Fused}) {
    torch::manual_seed(6);
    AttentionCall call;
    call.q = torch::randn({batch, heads, length, 8}, torch::kDouble).requires_grad_();
    call.k = torch::randn({batch, heads, length, 8}, torch::kDouble).requires_grad_();
    call.v = torch::randn({batch, heads, length, 8}, torch::kDouble).requires_grad_();
    call.key_padding = padding;
    call.spec = &spec;
    call.query_layout = &layout;
    call.key_layout = &layout;
    const at::Tensor out = attend(call, kernel);
    (out * torch::linspace(-1, 1, out.numel(), torch::kDouble).view(out.sizes())).sum().backward();
    outputs.push_back(out.detach());
    for (const at::Tensor& t : {call.q, call.k, call.v}) grads.push_back(t.grad());
  }
  EXPECT_TRUE(torch::allclose(outputs[0], outputs[1], 1e-10, 1e-10));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(grads[i], grads[i + 3], 1e-10, 1e-10)) << i;
}

TEST(Patterns, SparsityCountsTheVisiblePairs) {
  const TokenLayout layout = six_tokens();
  const PatternSet set;
  // intra_sentence sees 16 + 4 of 36 pairs; a plain head all 36.
  const LayerSpec half = inject_patterns(set.parse_list("intra_sentence"), 1, 2);
  EXPECT_NEAR(attention_sparsity(half, 2, layout, 6), 1.0 - (20.0 + 36.0) / 72.0, 1e-12);
  // A fixed head sees one key per query that has one: 5 of 36.
  const LayerSpec fixed = inject_patterns(set.parse_list("previous_token"), 1, 1);
  EXPECT_NEAR(attention_sparsity(fixed, 1, layout, 6), 1.0 - 5.0 / 36.0, 1e-12);
  // Eq. 4: tokens seen once see everything (rows 1, 3, 4), repeated ones their matches (3 each).
  const LayerSpec matching = inject_patterns(set.parse_list("matching_token"), 1, 1);
  EXPECT_NEAR(attention_sparsity(matching, 1, layout, 6), 1.0 - (3 * 6.0 + 3 * 3.0) / 36.0, 1e-12);
  EXPECT_EQ(attention_sparsity(LayerSpec{}, 4, layout, 6), 0.0);
}

}  // namespace
}  // namespace strata::attn
