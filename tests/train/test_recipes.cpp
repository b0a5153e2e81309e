// Every recipe is a valid set of run-config settings that builds the model it describes.
#include <gtest/gtest.h>

#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/models/model_config.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/recipes/recipe.h"
#include "strata/train/run_config.h"
#include "support/expect.h"

namespace strata {
namespace {

models::ModelConfig model_of(const Recipe& recipe) {
  Config config;
  for (const std::string& assignment : recipe.overrides) config.apply_override(assignment);
  config.validate(train::run_schema());
  models::ModelConfig m = models::ModelConfig::from_config(config);
  m.vocab_size = 50;
  m.check();
  return m;
}

TEST(Recipes, EveryRecipeBuildsItsModel) {
  ASSERT_GE(recipes().size(), 12u);
  for (const Recipe& recipe : recipes()) {
    SCOPED_TRACE(recipe.name);
    EXPECT_FALSE(recipe.summary.empty());
    const models::ModelConfig m = model_of(recipe);
    if (m.architecture == models::Architecture::Encoder) {
      models::EncoderModel model(m);  // seed 003
      continue;
    }
    models::Seq2Seq model(m);
    // Every seed-001 system reads the window or the tree; seed 000's blocking derives its
    // segments in the model, so its systems need no layout.
    EXPECT_EQ(model->uses_layout(), recipe.seed.starts_with("001"));
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
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-no-level")).encoder_attention[0].bias.level);
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-no-path")).encoder_attention[0].bias.path);
  EXPECT_FALSE(model_of(find_recipe("hibrids-enc-symmetric")).encoder_attention[0].bias.asymmetric);
  // The comparisons of seed 001 sit on LVLSECTOK, the base does not.
  Config config;
  for (const std::string& a : find_recipe("hibrids-enc").overrides) config.apply_override(a);
  config.validate(train::run_schema());
  EXPECT_EQ(train::data_options(config).truncation.section_tokens, SectionTokens::Level);
}

TEST(Recipes, AnUnknownNameSuggestsTheClosest) {
  const std::string message = test_support::error_of([] { find_recipe("hibrid-enc"); });
  EXPECT_NE(message.find("did you mean 'hibrids-enc'"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
