// Every recipe is a valid set of run-config settings that builds the model it describes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/models/model_config.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/recipe.h"
#include "strata/train/run_config.h"
#include "strata/train/freeze.h"
#include "support/expect.h"

namespace strata::recipes {
namespace {

models::ModelConfig model_of(const Recipe& recipe) {
  Config config;
  for (const std::string& assignment : recipe.overrides) config.apply_override(assignment);
  config.validate(recipes::run_schema());
  models::ModelConfig m = recipes::model_config(config);
  m.vocab_size = 50;
  m.check();
  return m;
}

TEST(Recipes, EveryRecipeBuildsItsModel) {
  ASSERT_GE(all_recipes().size(), 12u);
  for (const Recipe& recipe : all_recipes()) {
    SCOPED_TRACE(recipe.name);
    EXPECT_FALSE(recipe.summary.empty());
    const models::ModelConfig m = model_of(recipe);
    if (m.architecture == "encoder") {
      models::EncoderModel model(m);  // seed 003
      continue;
    }
    models::Seq2Seq model(m);
    // The seed-001 systems with section relations read the tree (the window, global tokens
    // and TOKBIAS's position buckets read token indices only); of seed 000's, the blocked ones
    // read the layout's segments.
    const std::set<std::string> index_only = {"longformer", "sectok", "lvlsectok", "tokbias"};
    EXPECT_EQ(model->uses_layout(),
              (recipe.seed.starts_with("001") && !index_only.contains(recipe.name)) || m.prefix_encoder_blocks > 1);
  }
}

TEST(Recipes, Seed003SystemsInjectWhatTheirNamesSay) {
  using attn::FixedPattern;
  using attn::MaskKind;
  auto heads_of = [](const char* name, std::vector<std::string> more = {}) {
    Recipe recipe = find_recipe(name);
    recipe.overrides.insert(recipe.overrides.end(), more.begin(), more.end());
    const models::ModelConfig m = model_of(recipe);
    return m.encoder_attention.empty() ? std::vector<attn::HeadSpec>{} : m.encoder_attention.at(0).heads;
  };
  EXPECT_TRUE(heads_of("extractive").empty());
  const std::vector<attn::HeadSpec> four = heads_of("extractive-patterns", {"model.heads=8"});
  ASSERT_EQ(four.size(), 8u);
  EXPECT_EQ(four[0].mask.kind, MaskKind::MatchingToken);
  EXPECT_EQ(four[1].mask.kind, MaskKind::SameSentence);
  EXPECT_EQ(four[2].fixed, FixedPattern::PreviousToken);
  EXPECT_EQ(four[3].fixed, FixedPattern::NextToken);
  for (std::size_t h = 4; h < 8; ++h) EXPECT_EQ(four[h], attn::HeadSpec{});
  const std::vector<attn::HeadSpec> all = heads_of("extractive-patterns-all", {"model.heads=8"});
  ASSERT_EQ(all.size(), 8u);
  for (std::size_t h = 0; h < 4; ++h) EXPECT_EQ(all[h + 4], all[h]);
  EXPECT_EQ(heads_of("segmentation-patterns")[1].mask.kind, MaskKind::SameSegment);
  const std::vector<attn::HeadSpec> positional = heads_of("extractive-p");
  EXPECT_EQ(positional[0].fixed, FixedPattern::PreviousToken);
  EXPECT_EQ(positional[1].fixed, FixedPattern::NextToken);
  EXPECT_EQ(positional[2], attn::HeadSpec{});
  // Table 7: segmentation's ablation reads the context, not the sentence.
  const std::vector<attn::HeadSpec> intra = heads_of("segmentation-mi");
  EXPECT_EQ(intra[0].mask.kind, MaskKind::MatchingToken);
  EXPECT_EQ(intra[1].mask.kind, MaskKind::SameSegment);
  EXPECT_EQ(intra[2], attn::HeadSpec{});
  EXPECT_EQ(model_of(find_recipe("segmentation-p")).head, model_of(find_recipe("segmentation")).head);
  const models::ModelConfig pal = model_of(find_recipe("pal-patterns"));
  EXPECT_TRUE(pal.encoder_attention.empty());
  ASSERT_EQ(pal.pal_attention.size(), 1u);
  EXPECT_EQ(pal.pal_attention[0].heads[0].mask.kind, MaskKind::MatchingToken);
}

TEST(Recipes, InjectionRejectsWhatCannotBeBuilt) {
  auto error_of = [](std::vector<std::string> overrides) {
    return test_support::error_of([&] {
      Recipe recipe = find_recipe("extractive");
      recipe.overrides.insert(recipe.overrides.end(), overrides.begin(), overrides.end());
      model_of(recipe);
    });
  };
  std::string message = error_of({"model.inject_patterns=matching_tokens"});
  EXPECT_NE(message.find("did you mean 'matching_token'"), std::string::npos) << message;
  EXPECT_NE(message.find("known patterns: matching_token, intra_sentence"), std::string::npos) << message;
  message = error_of({"model.inject_patterns=matching_token", "model.inject_heads=5"});  // 4 heads
  EXPECT_NE(message.find("model.inject_heads: 5 patterned heads"), std::string::npos) << message;
  message = error_of({"model.inject_patterns=punctuation"});
  EXPECT_NE(message.find("analysis only"), std::string::npos) << message;
  message = error_of({"model.inject_patterns=local", R"(model.pattern_definitions={"local": "previous_token | next_tok"})"});
  EXPECT_NE(message.find("unknown pattern 'next_tok'"), std::string::npos) << message;
}

TEST(Recipes, Seed001SystemsAreWhatTheirNamesSay) {
  using attn::RelationKind;
  EXPECT_EQ(model_of(find_recipe("longformer")).encoder_attention[0].bias.kind, RelationKind::None);
  EXPECT_EQ(model_of(find_recipe("hibrids-enc")).encoder_attention[0].bias.kind, RelationKind::Hibrids);
  EXPECT_EQ(model_of(find_recipe("hibrids-s-enc")).encoder_attention[0].bias.kind, RelationKind::HibridsSelected);
  EXPECT_EQ(model_of(find_recipe("tokbias")).encoder_attention[0].bias.kind, RelationKind::T5Buckets);
  EXPECT_EQ(model_of(find_recipe("secbias")).encoder_attention[0].bias.kind, RelationKind::SectionDistance);
  const models::ModelConfig dec = model_of(find_recipe("hibrids-dec"));
  EXPECT_EQ(dec.decoder_hibrids.kind, RelationKind::Hibrids);
  EXPECT_EQ(dec.encoder_attention[0].bias.kind, RelationKind::None);
  const models::ModelConfig both = model_of(find_recipe("hibrids-enc-dec"));
  EXPECT_EQ(both.decoder_hibrids.kind, RelationKind::Hibrids);
  EXPECT_EQ(both.encoder_attention[0].bias.kind, RelationKind::Hibrids);
  const models::ModelConfig hierenc = model_of(find_recipe("hierenc-hibrids"));
  EXPECT_EQ(hierenc.section_encoder_layers, 2);
  EXPECT_EQ(hierenc.section_encoder_hibrids.kind, RelationKind::Hibrids);
  EXPECT_EQ(hierenc.encoder_attention[0].bias.kind, RelationKind::None);
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-no-level")).encoder_attention[0].bias.level);
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-no-path")).encoder_attention[0].bias.path);
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-symmetric")).encoder_attention[0].bias.asymmetric);
  // The comparisons of seed 001 sit on LVLSECTOK, the base does not.
  Config config;
  for (const std::string& a : find_recipe("hibrids-enc").overrides) config.apply_override(a);
  config.validate(recipes::run_schema());
  EXPECT_EQ(train::data_options(config).truncation.section_tokens, SectionTokens::Level);
}

TEST(Recipes, AnUnknownNameSuggestsTheClosest) {
  const std::string message = test_support::error_of([] { find_recipe("hibrid-enc"); });
  EXPECT_NE(message.find("did you mean 'hibrids-enc'"), std::string::npos) << message;
}

// Seed 000's systems on a small model: 4 encoder and 2 decoder layers (the lower ones are
// layers 0-1 and 0), 6 prefixes, blocks of 3 input and 2 output segments.
models::Seq2Seq seed000_model(const std::string& name) {
  Recipe recipe = find_recipe(name);
  for (const char* more : {"model.d_model=16", "model.heads=2", "model.d_ff=16", "model.encoder_layers=4",
                           "model.decoder_layers=2", "model.prefix_hidden=8", "model.dropout=0", "model.max_positions=32"})
    recipe.overrides.push_back(more);
  for (std::string& o : recipe.overrides)
    if (o.starts_with("model.prefix_length=")) o = "model.prefix_length=6";
  if (name.find("block") != std::string::npos) recipe.overrides.push_back("model.prefix_decoder_segment=2");
  models::Seq2Seq model(model_of(recipe));
  model->eval();  // SoftSA without noise: softmax(s / tau), positive wherever a key is visible
  return model;
}

// Which (query, key) pairs got weight, per batch item: "1" visible, "0" hidden, prefix
// columns first and a '|' before the keys proper; padding queries are left out.
std::vector<std::vector<std::string>> drawn(const at::Tensor& weights, const std::vector<std::int64_t>& lengths,
                                            std::int64_t prefix) {
  std::vector<std::vector<std::string>> out;
  const at::Tensor seen = weights.sum(1).ne(0);  // over heads: every head shares the layer's mask
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    out.emplace_back();
    for (std::int64_t i = 0; i < lengths[b]; ++i) {
      std::string row;
      for (std::int64_t n = 0; n < seen.size(2); ++n) {
        if (n == prefix && prefix > 0) row += '|';
        row += seen[static_cast<std::int64_t>(b)][i][n].item<bool>() ? '1' : '0';
      }
      out.back().push_back(row);
    }
  }
  return out;
}

using Drawing = std::vector<std::vector<std::string>>;

// Items of 6, 3 and 2 tokens (padded to 6). Blocked: each item's tokens split evenly into 3
// segments, the 6 prefixes into 3 groups of 2; the 2-token item leaves group 2 unseen.
const Drawing kBlocked = {{"110000|111111", "110000|111111", "001100|111111", "001100|111111", "000011|111111",
                           "000011|111111"},
                          {"110000|111000", "001100|111000", "000011|111000"},
                          {"110000|110000", "001100|110000"}};
const Drawing kDense = {{"111111|111111", "111111|111111", "111111|111111", "111111|111111", "111111|111111",
                         "111111|111111"},
                        {"111111|111000", "111111|111000", "111111|111000"},
                        {"111111|110000", "111111|110000"}};
const Drawing kNoPrefix = {{"111111", "111111", "111111", "111111", "111111", "111111"},
                           {"111000", "111000", "111000"},
                           {"110000", "110000"}};

std::vector<Drawing> encoder_drawings(models::Seq2Seq& model) {
  const std::vector<std::int64_t> lengths = {6, 3, 2};
  const at::Tensor source = torch::randint(5, 40, {3, 6}, torch::kInt64);
  const at::Tensor padding = torch::arange(6).unsqueeze(0) < torch::tensor(lengths).unsqueeze(1);
  std::vector<Drawing> out;
  for (auto& layer : *model->encoder->layers) layer->as<nn::EncoderLayer>()->self_attn->record_weights(true);
  torch::NoGradGuard no_grad;
  // Blocked prefixes read the layout's segments: each item's real tokens split evenly, as the data cuts them.
  attn::TokenLayout layout;
  layout.segment = nn::encoder_segments(padding, 6, std::max<std::int64_t>(model->config().prefix_encoder_blocks, 1));
  model->encode(source, padding, &layout);
  for (auto& layer : *model->encoder->layers) {
    auto attention = layer->as<nn::EncoderLayer>()->self_attn;
    out.push_back(drawn(attention->recorded_weights(), lengths, attention->recorded_prefix_len()));
  }
  return out;
}

TEST(Recipes, Seed000EncoderMasksMatchHandDrawnOnes) {
  const std::map<std::string, std::vector<Drawing>> want = {
      {"finetune", {kNoPrefix, kNoPrefix, kNoPrefix, kNoPrefix}},
      {"prefix", {kDense, kDense, kDense, kDense}},
      {"prefix-top", {kNoPrefix, kNoPrefix, kDense, kDense}},
      {"prefix-low", {kDense, kDense, kNoPrefix, kNoPrefix}},
      {"uniblock", {kBlocked, kBlocked, kBlocked, kBlocked}},
      {"hierblock", {kBlocked, kBlocked, kDense, kDense}},
      {"softsa", {kDense, kDense, kDense, kDense}},
      {"hsoftsa", {kDense, kDense, kDense, kDense}},
      {"hierblock-softsa", {kBlocked, kBlocked, kDense, kDense}},
  };
  torch::manual_seed(3);
  for (const auto& [name, layers] : want) {
    SCOPED_TRACE(name);
    models::Seq2Seq model = seed000_model(name);
    EXPECT_EQ(encoder_drawings(model), layers);
  }
}

TEST(Recipes, Seed000SparsityGoesWhereTheNamesSay) {
  using attn::NormaliserKind;
  auto normalisers = [](const char* name) {
    models::Seq2Seq model = seed000_model(name);
    std::vector<NormaliserKind> out;
    for (std::int64_t l = 0; l < 4; ++l)
      out.push_back(models::ModelConfig::spec_of(model->config().encoder_attention, l).heads[0].normaliser.kind);
    return out;
  };
  const NormaliserKind S = NormaliserKind::Softmax, T = NormaliserKind::TopP, G = NormaliserKind::Gumbel;
  EXPECT_EQ(normalisers("prefix"), (std::vector{S, S, S, S}));
  EXPECT_EQ(normalisers("truncsa"), (std::vector{T, T, T, T}));
  EXPECT_EQ(normalisers("htruncsa"), (std::vector{T, T, S, S}));
  EXPECT_EQ(normalisers("softsa"), (std::vector{G, G, G, G}));
  EXPECT_EQ(normalisers("hsoftsa"), (std::vector{G, G, S, S}));
  EXPECT_EQ(normalisers("hierblock-softsa"), (std::vector{G, G, S, S}));
  EXPECT_EQ(normalisers("finetune-truncsa"), (std::vector{T, T, T, T}));
  EXPECT_EQ(normalisers("finetune-softsa"), (std::vector{G, G, G, G}));
  EXPECT_EQ(seed000_model("truncsa")->config().encoder_attention.at(0).heads[0].normaliser.p, 0.95);
  EXPECT_EQ(seed000_model("softsa")->config().encoder_attention.at(0).heads[0].normaliser.tau, 1.0);
  EXPECT_TRUE(seed000_model("finetune-softsa")->config().decoder_attention.empty());
}

// The decoder blocks over output segments of 2 positions (2 segments: the last takes the
// rest) and 2 prefix groups of 3, causally; cached decoding draws the same rows.
TEST(Recipes, Seed000DecoderMasksMatchHandDrawnOnes) {
  const Drawing blocked = {{"111000|10000", "111000|11000", "000111|11100", "000111|11110", "000111|11111"}};
  const Drawing dense = {{"111111|10000", "111111|11000", "111111|11100", "111111|11110", "111111|11111"}};
  torch::manual_seed(4);
  for (const auto& [name, layers] : std::map<std::string, std::vector<Drawing>>{
           {"uniblock", {blocked, blocked}}, {"hierblock", {blocked, dense}}, {"prefix", {dense, dense}}}) {
    SCOPED_TRACE(name);
    models::Seq2Seq model = seed000_model(name);
    torch::NoGradGuard no_grad;
    attn::TokenLayout source;
    source.segment = nn::encoder_segments(at::Tensor(), 4, std::max<std::int64_t>(model->config().prefix_encoder_blocks, 1));
    const models::EncoderOutput memory = model->encode(torch::randint(5, 40, {1, 4}, torch::kInt64), at::Tensor(), &source);
    const at::Tensor inputs = torch::randint(5, 40, {1, 5}, torch::kInt64);
    auto attention = [&](std::int64_t l) { return model->decoder->layers[l]->as<nn::DecoderLayer>()->self_attn; };
    for (std::int64_t l = 0; l < 2; ++l) attention(l)->record_weights(true);
    model->decode(inputs, memory);
    for (std::int64_t l = 0; l < 2; ++l)
      EXPECT_EQ(drawn(attention(l)->recorded_weights(), {5}, 6), layers[static_cast<std::size_t>(l)]) << "layer " << l;
    // One position at a time with a cache: row t of the drawing, cut at its own keys.
    nn::KvCache cache = model->new_cache();
    for (std::int64_t t = 0; t < 5; ++t) {
      for (std::int64_t l = 0; l < 2; ++l) attention(l)->record_weights(true);
      model->decode(inputs.narrow(1, t, 1), memory, &cache);
      for (std::int64_t l = 0; l < 2; ++l) {
        const std::string row = drawn(attention(l)->recorded_weights(), {1}, 6)[0][0];
        EXPECT_EQ(row, layers[static_cast<std::size_t>(l)][0][static_cast<std::size_t>(t)].substr(0, 8 + t))
            << "layer " << l << " step " << t;
      }
    }
  }
}

// Prefix recipes train the prefixes and nothing else: the backbone gets no gradient.
TEST(Recipes, Seed000PrefixRecipesFreezeTheBackbone) {
  for (const char* name : {"prefix", "hierblock-softsa", "truncsa"}) {
    SCOPED_TRACE(name);
    Recipe recipe = find_recipe(name);
    Config config;
    for (const std::string& assignment : recipe.overrides) config.apply_override(assignment);
    config.validate(recipes::run_schema());
    models::Seq2Seq model = seed000_model(name);
    model->train();
    const std::vector<std::string> frozen = train::train_only(*model, train::train_options(config).train_only);
    EXPECT_FALSE(frozen.empty());
    const at::Tensor source = torch::randint(5, 40, {2, 6}, torch::kInt64);
    attn::TokenLayout layout;  // hierblock's blocked prefixes read the segments the data cuts
    layout.segment = nn::encoder_segments(at::Tensor(), 6, std::max<std::int64_t>(model->config().prefix_encoder_blocks, 1));
    model->forward(source, at::Tensor(), source, &layout).pow(2).mean().backward();
    for (const auto& p : model->named_parameters()) {
      const bool is_prefix = p.key().starts_with("prefix.");
      EXPECT_EQ(p.value().requires_grad(), is_prefix) << p.key();
      EXPECT_EQ(p.value().grad().defined(), is_prefix) << p.key();
      if (is_prefix) EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0) << p.key();
    }
  }
}

}  // namespace
}  // namespace strata::recipes
