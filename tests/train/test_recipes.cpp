// Every recipe is a valid set of run-config settings that builds the model it describes.
#include <gtest/gtest.h>

#include "strata/core/config.h"
#include "strata/core/error.h"
#include "strata/models/model_config.h"
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
    models::Seq2Seq model(m);
    EXPECT_TRUE(model->uses_layout());  // every seed-001 system reads the window or the tree
  }
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
