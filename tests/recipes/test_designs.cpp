// The designs (recipes/designs.h): each compiles its keys into specs, and rejects what cannot work.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/config.h"
#include "strata/recipes/designs.h"
#include "strata/recipes/recipe.h"
#include "strata/train/run_config.h"
#include "support/expect.h"

namespace strata::recipes {
namespace {

using test_support::error_of;

models::ModelConfig from_overrides(const std::vector<std::string>& overrides) {
  Config config;
  for (const char* o : {"model.prefix_length=6", "model.encoder_layers=4"}) config.apply_override(o);
  for (const std::string& o : overrides) config.apply_override(o);
  config.validate(run_schema());
  models::ModelConfig m = model_config(config);
  m.vocab_size = 40;
  m.check();
  return m;
}

TEST(PrefixAttentionDesign, KeysRejectWhatCannotWork) {
  auto error = [](const std::vector<std::string>& overrides) { return error_of([&] { from_overrides(overrides); }); };
  EXPECT_NE(error({"model.sparse_attention=softsa", "model.sparse_tau=0"}).find("model.sparse_tau"), std::string::npos);
  EXPECT_NE(error({"model.sparse_attention=softsa", "model.sparse_tau=-1"}).find("> 0"), std::string::npos);
  EXPECT_NE(error({"model.sparse_attention=truncsa", "model.sparse_p=0"}).find("model.sparse_p"), std::string::npos);
  EXPECT_NE(error({"model.sparse_attention=truncsa", "model.sparse_p=1.5"}).find("(0, 1]"), std::string::npos);
  EXPECT_NE(error({"model.sparse_attention=topk"}).find("known: none, truncsa, softsa"), std::string::npos);
  EXPECT_NE(error({"model.prefix_encoder_blocks=7"}).find("at least as many prefixes"), std::string::npos);
  EXPECT_NE(error({"model.prefix_length=0", "model.prefix_decoder_blocks=2"}).find("no prefixes"), std::string::npos);
  EXPECT_NE(error({"model.prefix_layers=1,x"}).find("model.prefix_layers"), std::string::npos);
  EXPECT_NE(error({"model.prefix_layers=\"4\""}).find("outside the stack's 4 layers"), std::string::npos);
  EXPECT_NE(error({"model.prefix_blocking=middle"}).find("known: all, lower"), std::string::npos);
  EXPECT_NE(error({"model.prefix_encoder_blocks=2", R"(model.encoder_attention={"heads": [{"mask": "causal"}]})"})
                .find("give one or the other"),
            std::string::npos);
  EXPECT_NE(error({"model.prefix_layers=top", R"(model.encoder_attention={"heads": [{"mask": "prefix_block"}]})"})
                .find("layer 0 blocks prefixes"),
            std::string::npos);
  // The layout owns the segments the blocked prefixes read: the data cuts as many, or follows (0).
  EXPECT_NE(error({"model.prefix_encoder_blocks=3", "data.segments=2"}).find("the two must agree"), std::string::npos);
  EXPECT_EQ(error({"model.prefix_encoder_blocks=3", "data.segments=3"}), "(no error)");
  // p = 1 keeps every key; blocks equal to the prefixes is the finest grouping: both fine.
  EXPECT_EQ(error({"model.sparse_attention=truncsa", "model.sparse_p=1", "model.prefix_encoder_blocks=6"}), "(no error)");
}

TEST(PrefixAttentionDesign, TheDataCutsAsManySegmentsAsTheModelBlocksByDefault) {
  Config config;
  for (const char* o : {"model.prefix_length=6", "model.prefix_encoder_blocks=3"}) config.apply_override(o);
  config.validate(run_schema());
  EXPECT_EQ(train::data_options(config).truncation.segments, 3);
  config.apply_override("data.segments=2");
  EXPECT_EQ(train::data_options(config).truncation.segments, 2);
  Config plain;
  plain.validate(run_schema());
  EXPECT_EQ(train::data_options(plain).truncation.segments, 1);
}

TEST(Designs, EveryRecipeNamesTheDesignsWhoseKeysItSets) {
  for (const Recipe& recipe : all_recipes()) {
    SCOPED_TRACE(recipe.name);
    for (const Design& design : designs()) {
      bool sets_a_key = false;
      for (const std::string& key : design_keys(design))
        for (const std::string& assignment : recipe.overrides)
          sets_a_key = sets_a_key || assignment.starts_with(key + "=");
      const bool named = std::find(recipe.designs.begin(), recipe.designs.end(), design.name) != recipe.designs.end();
      EXPECT_EQ(named, sets_a_key) << design.name;
    }
    for (const std::string& name : recipe.designs) EXPECT_NO_THROW(find_design(name)) << name;
  }
}

TEST(Designs, UnknownNamesSuggestTheClosest) {
  const std::string message = error_of([] { find_design("prefix_atention"); });
  EXPECT_NE(message.find("did you mean 'prefix_attention'"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata::recipes
