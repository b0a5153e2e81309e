// Global relevance (seed 003 Eq. 1): the per-example terms on hand-made attention, the 3-sigma
// rule, token classes, and the driver on a tiny encoder whose heads are fixed or masked to a
// pattern, so that their relevance is known exactly.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "strata/analysis/global_relevance.h"
#include "strata/attn/patterns.h"
#include "strata/core/error.h"
#include "strata/models/encoder_model.h"
#include "strata/nn/multi_head_attention.h"
#include "support/word_tokenizer.h"

namespace strata::analysis {
namespace {

TEST(GlobalRelevanceSums, CountsRealPairsOnlyAndDividesByTheRealLength) {
  // Two examples of length 3 and 2 (one padding position), two heads, L = 3.
  const at::Tensor weights = torch::tensor({// example 0, head 0
                                            0.5, 0.5, 0.0, 0.2, 0.3, 0.5, 0.1, 0.1, 0.8,
                                            // example 0, head 1: the identity
                                            1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
                                            // example 1, head 0 (row 2 and column 2 are padding)
                                            0.6, 0.4, 0.0, 0.9, 0.1, 0.0, 0.3, 0.3, 0.4,
                                            // example 1, head 1
                                            0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0},
                                           torch::kFloat)
                                .view({2, 2, 3, 3});
  const at::Tensor lengths = torch::tensor({3, 2}, torch::kLong);
  // previous token: j = i - 1.
  const at::Tensor previous =
      torch::ones({3, 3}, torch::kBool).triu(-1).tril(-1).unsqueeze(0).expand({2, 3, 3});
  const at::Tensor terms = global_relevance_sums(weights, previous, lengths);
  ASSERT_EQ(terms.sizes(), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(terms.scalar_type(), torch::kDouble);
  // Example 0: head 0 puts 0.2 (1→0) + 0.1 (2→1) on its previous tokens, over |x| = 3.
  EXPECT_NEAR(terms[0][0].item<double>(), 0.3 / 3, 1e-7);
  EXPECT_NEAR(terms[0][1].item<double>(), 0.0, 1e-12);
  // Example 1: only 1→0 counts (query 2 is padding): 0.9 / 2 and 1 / 2, not (0.9 + 0.3) / 2
  // and (1 + 1) / 2.
  EXPECT_NEAR(terms[1][0].item<double>(), 0.45, 1e-7);
  EXPECT_NEAR(terms[1][1].item<double>(), 0.5, 1e-7);

  // A predicate true everywhere counts the weight on real keys: each real row of example 1's
  // head 0 sums to 1 over keys 0 and 1, so the term is 2 / 2; keys beyond the length do not count.
  const at::Tensor everywhere = torch::ones({2, 3, 3}, torch::kBool);
  const at::Tensor all = global_relevance_sums(weights, everywhere, lengths);
  EXPECT_NEAR(all[0][0].item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(all[1][0].item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(all[1][1].item<double>(), 1.0, 1e-7);
}

TEST(GlobalRelevanceSums, RejectsMismatchedShapes) {
  const at::Tensor weights = torch::zeros({2, 1, 3, 3});
  EXPECT_THROW(global_relevance_sums(weights, torch::ones({2, 4, 4}, torch::kBool), torch::tensor({3, 3})), Error);
  EXPECT_THROW(global_relevance_sums(weights, torch::ones({2, 3, 3}, torch::kBool), torch::tensor({3})), Error);
  EXPECT_THROW(global_relevance_sums(torch::zeros({2, 3, 3}), torch::ones({2, 3, 3}, torch::kBool),
                                     torch::tensor({3, 3})),
               Error);
}

TEST(ThreeSigmaRule, KeepsAPatternOnlyWhenAHeadStandsOutByThreeDeviations) {
  // Twelve heads, one at 1: mean 1/12, std sqrt(11)/12, threshold 0.912 < 1: kept.
  PatternRelevance twelve;
  twelve.matrix = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 1, 0}};
  summarize_relevance(twelve, 2);
  EXPECT_NEAR(twelve.mean, 1.0 / 12, 1e-12);
  EXPECT_NEAR(twelve.std, std::sqrt(11.0) / 12, 1e-12);
  EXPECT_TRUE(twelve.kept);
  ASSERT_EQ(twelve.top.size(), 2u);
  EXPECT_EQ(twelve.top[0].layer, 2u);
  EXPECT_EQ(twelve.top[0].head, 2);
  EXPECT_EQ(twelve.top[0].value, 1.0);
  EXPECT_EQ(twelve.top[1].layer, 0u);  // ties: the earliest head
  EXPECT_EQ(twelve.top[1].head, 0);
  // Ten heads, one at 1: mean 0.1, std 0.3, threshold exactly 1: not above it.
  PatternRelevance ten;
  ten.matrix = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 1}};
  summarize_relevance(ten, 5);
  EXPECT_NEAR(ten.std, 0.3, 1e-12);
  EXPECT_FALSE(ten.kept);
  // Equal values everywhere: no head stands out.
  PatternRelevance flat;
  flat.matrix = {{0.5, 0.5}, {0.5, 0.5}};
  summarize_relevance(flat, 1);
  EXPECT_FALSE(flat.kept);
}

TEST(TokenClasses, PunctuationIsJudgedByEveryCharacter) {
  for (const char* yes : {".", "...", " ,", "—", "«»", "“", "!?", "(", "_"})
    EXPECT_TRUE(is_punctuation_text(yes)) << yes;
  for (const char* no : {"", "  ", "a.", "1", "$", "+", "Ġ.", "\xff"}) EXPECT_FALSE(is_punctuation_text(no)) << no;
}

TEST(TokenClasses, SpecialTokensAndPunctuationGetTheirBits) {
  test_support::WordTokenizer tokenizer;  // 0-3: <pad> <s> </s> <unk>
  const std::vector<std::int32_t> ids = tokenizer.encode("the cat , sat ... on «» mats.");
  const std::vector<std::int32_t> table = token_class_table(tokenizer);
  ASSERT_EQ(table.size(), static_cast<std::size_t>(tokenizer.vocab_size()));
  for (std::int32_t special = 0; special < 4; ++special) EXPECT_EQ(table[special], attn::kSpecialTokenClass);
  const std::vector<std::int32_t> expected = {0, 0, attn::kPunctuationClass, 0, attn::kPunctuationClass, 0,
                                              attn::kPunctuationClass, 0};
  ASSERT_EQ(ids.size(), expected.size());
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(table[ids[i]], expected[i]) << tokenizer.id_to_piece(ids[i]);
}

// A tiny encoder whose 3 heads per layer are: previous token (fixed, Eq. 6), same sentence
// (masked, Eq. 5), plain softmax.
models::EncoderModel patterned_encoder() {
  models::ModelConfig c;
  c.architecture = "encoder";
  c.head = models::EncoderHead::Token;
  c.vocab_size = 30;
  c.d_model = 12;
  c.heads = 3;
  c.d_ff = 24;
  c.encoder_layers = 2;
  c.max_positions = 32;
  attn::LayerSpec spec;
  attn::HeadSpec previous, sentence;
  previous.fixed = attn::FixedPattern::PreviousToken;
  sentence.mask = attn::Mask::of(attn::MaskKind::SameSentence);
  spec.heads = {previous, sentence, attn::HeadSpec{}};
  c.encoder_attention = {spec};
  torch::manual_seed(3);
  return models::EncoderModel(c);
}

Layout layout_of(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& sentences) {
  Layout layout;
  layout.token = tokens;
  layout.sentence = sentences;
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    layout.position.push_back(static_cast<std::int32_t>(p));
    layout.section.push_back(0);
    layout.paragraph.push_back(0);
    layout.segment.push_back(0);
  }
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {""};
  return layout;
}

// Validation examples as a task would give them, through the analysis interface.
class ToySource : public AnalysisBatchSource {
 public:
  explicit ToySource(models::EncoderModel model) : model_(std::move(model)) {
    examples_ = {layout_of({5, 6, 7, 5, 8, 9}, {0, 0, 0, 1, 1, 1}), layout_of({10, 11, 10, 12}, {0, 0, 1, 1}),
                 layout_of({13, 14, 15, 16, 17}, {0, 1, 1, 2, 2})};
    for (const Layout& e : examples_) costs_.push_back(e.size());
  }
  AnalysisBatch analysis_batch(train::Split split, std::span<const std::size_t> rows) override {
    EXPECT_EQ(split, train::Split::Valid);
    std::vector<const Layout*> layouts;
    std::int64_t longest = 0;
    for (const std::size_t r : rows) {
      layouts.push_back(&examples_.at(r));
      longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(examples_[r].size()));
    }
    const auto batch = static_cast<std::int64_t>(rows.size());
    AnalysisBatch out;
    out.ids = torch::full({batch, longest}, 0, torch::kLong);
    out.padding = torch::zeros({batch, longest}, torch::kBool);
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::size_t p = 0; p < layouts[b]->size(); ++p) {
        out.ids[b][static_cast<std::int64_t>(p)] = layouts[b]->token[p];
        out.padding[b][static_cast<std::int64_t>(p)] = true;
      }
    out.layout = attn::batch_layouts(layouts, longest);
    out.forward = [model = model_, ids = out.ids, padding = out.padding, layout = out.layout]() mutable {
      model->forward(ids, padding, &layout);
    };
    ++batches;
    return out;
  }

  models::EncoderModel model_;
  std::vector<Layout> examples_;
  std::vector<std::size_t> costs_;
  int batches = 0;
};

TEST(GlobalRelevanceDriver, FixedAndMaskedHeadsScoreTheirOwnPattern) {
  ToySource source(patterned_encoder());
  const std::vector<NamedAttention> layers = encoder_self_attention(*source.model_);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "encoder.layers.0.self_attn");
  EXPECT_EQ(layers[1].name, "encoder.layers.1.self_attn");

  attn::PatternSet set;
  set.define(nlohmann::json{{"anywhere", "intra_sentence | !intra_sentence"}});
  const std::vector<attn::Pattern> patterns =
      set.parse_list("previous_token, intra_sentence, next_token, matching_token, anywhere");
  RelevanceOptions options;
  options.max_tokens = 12;  // two batches: examples 0 and 1 padded to 6, then example 2
  options.top = 2;
  source.model_->train();
  const GlobalRelevance gr = global_relevance(*source.model_, source, source.costs_, layers, patterns, options);
  EXPECT_EQ(source.batches, 2);
  EXPECT_TRUE(source.model_->is_training());  // restored
  EXPECT_FALSE(layers[0].module->recorded_weights().defined());  // recording stopped
  EXPECT_EQ(gr.examples, 3);
  EXPECT_EQ(gr.layers, (std::vector<std::string>{"encoder.layers.0.self_attn", "encoder.layers.1.self_attn"}));
  ASSERT_EQ(gr.patterns.size(), 5u);

  // The fixed head puts all of each query's weight on the previous token, except the first
  // query, which has none: (|x| - 1) / |x| per example.
  const double previous = (5.0 / 6 + 3.0 / 4 + 4.0 / 5) / 3;
  // Example 1 ("10 11 10 12"): query 2 repeats token 10 and its previous token is 11, not 10;
  // no other repeated token sits right before a copy of itself, so the fixed head scores 0.
  for (std::size_t l = 0; l < 2; ++l) {
    const PatternRelevance& p = gr.patterns[0];
    EXPECT_EQ(p.pattern, "previous_token");
    EXPECT_NEAR(p.matrix[l][0], previous, 1e-6) << l;
    EXPECT_NEAR(gr.patterns[1].matrix[l][1], 1.0, 1e-6) << l;  // the masked head stays in its sentence
    EXPECT_NEAR(gr.patterns[2].matrix[l][0], 0.0, 1e-7) << l;  // the fixed head never looks ahead
    EXPECT_NEAR(gr.patterns[3].matrix[l][0], 0.0, 1e-7) << l;
    for (std::int64_t h = 1; h < 3; ++h)
      EXPECT_NEAR(gr.patterns[4].matrix[l][h], 1.0, 1e-6) << l << " " << h;  // softmax rows sum to 1
    EXPECT_NEAR(gr.patterns[4].matrix[l][0], previous, 1e-6) << l;
    // The plain head spreads its weight: neither pattern takes all of it.
    EXPECT_LT(gr.patterns[0].matrix[l][2], 0.99);
    EXPECT_GT(gr.patterns[0].matrix[l][2], 0.0);
  }
  EXPECT_EQ(gr.patterns[1].top.size(), 2u);
  EXPECT_EQ(gr.patterns[1].top[0].head, 1);

  // Batching does not change the result: every example alone gives the same matrices.
  options.max_tokens = 1;
  const GlobalRelevance alone = global_relevance(*source.model_, source, source.costs_, layers, patterns, options);
  for (std::size_t p = 0; p < patterns.size(); ++p)
    for (std::size_t l = 0; l < 2; ++l)
      for (std::size_t h = 0; h < 3; ++h)
        EXPECT_NEAR(alone.patterns[p].matrix[l][h], gr.patterns[p].matrix[l][h], 1e-6) << p << l << h;

  const nlohmann::ordered_json json = to_json(gr);
  EXPECT_EQ(json["examples"], 3);
  ASSERT_EQ(json["patterns"].size(), 5u);
  EXPECT_EQ(json["patterns"][1]["name"], "intra_sentence");
  EXPECT_EQ(json["patterns"][1]["matrix"].size(), 2u);
  EXPECT_EQ(json["patterns"][1]["matrix"][0].size(), 3u);
  EXPECT_EQ(json["patterns"][1]["top"][0]["head"], 1);
  EXPECT_TRUE(json["patterns"][1]["top"][0]["layer_name"].is_string());
  EXPECT_NEAR(json["patterns"][1]["threshold"].get<double>(), gr.patterns[1].mean + 3 * gr.patterns[1].std, 1e-12);
}

TEST(GlobalRelevanceDriver, MaxExamplesAndTokenClasses) {
  ToySource source(patterned_encoder());
  const std::vector<NamedAttention> layers = encoder_self_attention(*source.model_);
  attn::PatternSet set;
  RelevanceOptions options;
  options.max_examples = 1;
  // special_token needs token classes: without them the error names the pattern.
  try {
    global_relevance(*source.model_, source, source.costs_, layers, set.parse_list("special_token"), options);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("special_token"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("token classes"), std::string::npos) << e.what();
  }
  // Token 5 is "special", the first key of example 0 (and its fourth): the previous-token
  // head looks at it from queries 1 and 4, 2 of 6.
  options.token_classes.assign(30, 0);
  options.token_classes[5] = attn::kSpecialTokenClass;
  const GlobalRelevance gr =
      global_relevance(*source.model_, source, source.costs_, layers, set.parse_list("special_token"), options);
  EXPECT_EQ(gr.examples, 1);
  EXPECT_NEAR(gr.patterns[0].matrix[0][0], 2.0 / 6, 1e-6);
}

TEST(GlobalRelevanceDriver, ErrorsSayWhatIsMissing) {
  ToySource source(patterned_encoder());
  const std::vector<NamedAttention> layers = encoder_self_attention(*source.model_);
  const std::vector<attn::Pattern> patterns = attn::PatternSet().parse_list("intra_sentence");
  EXPECT_THROW(global_relevance(*source.model_, source, {}, layers, patterns, {}), Error);
  EXPECT_THROW(global_relevance(*source.model_, source, source.costs_, layers, {}, {}), Error);
  EXPECT_THROW(global_relevance(*source.model_, source, source.costs_, {}, patterns, {}), Error);
  torch::nn::Sequential no_encoder;
  EXPECT_THROW(encoder_self_attention(*no_encoder), Error);
}

}  // namespace
}  // namespace strata::analysis
