// `strata recipes list|show` and `strata train --recipe` as a user meets them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class CliRecipes : public test_support::ScratchTest {
 protected:
  CliRecipes() : ScratchTest("strata_cli_recipes") {}
};

TEST_F(CliRecipes, ListNamesEverySeed001SystemWithOneLineEach) {
  const auto r = run("recipes list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"longformer", "sectok", "lvlsectok", "tokbias", "secbias", "hibrids-enc",
                           "hibrids-s-enc", "hibrids-dec", "hibrids-s-dec", "hibrids-enc-no-level",
                           "hibrids-enc-no-path", "hibrids-enc-symmetric", "hierenc", "multitask",
                           "hierenc-hibrids", "hibrids-enc-dec"})
    EXPECT_NE(("\n" + r.out).find(std::string("\n") + name + " "), std::string::npos) << name << "\n" << r.out;
}

TEST_F(CliRecipes, ShowPrintsTheSettings) {
  const auto r = run("recipes show hibrids-dec");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("data.section_tokens=lvlsectok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.decoder_hibrids={\"kind\": \"hibrids\""), std::string::npos) << r.out;
}

TEST_F(CliRecipes, AnUnknownRecipeIsAnErrorWithASuggestion) {
  for (const char* args : {"recipes show hibrid-dec", "train --recipe hibrid-dec --out x --print-config"}) {
    const auto r = run(args);
    EXPECT_NE(r.exit_code, 0) << args;
    EXPECT_NE(r.err.find("did you mean 'hibrids-dec'"), std::string::npos) << args << ": " << r.err;
  }
}

TEST_F(CliRecipes, TrainPrintsTheRecipeOverTheConfigAndOverridesOverBoth) {
  const auto r = run("train --recipe secbias --print-config data.section_tokens=none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("section_distance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("section_tokens = \"none\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace strata
