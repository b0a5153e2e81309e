#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "strata/core/config.h"
#include "strata/core/edit_distance.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

fs::path write_temp(const std::string& name, std::string_view contents) {
  const fs::path path =
      fs::temp_directory_path() / ("strata_config_" + std::to_string(::getpid()) + "_" + name);
  write_file_atomic(path, contents);
  return path;
}

ConfigSchema training_schema() {
  ConfigSchema schema;
  schema.add("model.layers", std::int64_t{6}, "transformer layers")
      .add("model.name", std::string("tiny"), "a name for the run's model")
      .add("model.encoder.heads", std::int64_t{8}, "attention heads per layer")
      .add("data.path", std::string("runs/demo/corpus"), "corpus directory")
      .add("data.buckets", std::vector<std::int64_t>{512, 1024}, "length buckets")
      .add("train.learning_rate", 1e-3, "peak learning rate")
      .add("train.steps", std::int64_t{1000}, "optimizer steps")
      .add("train.fp16", false, "half-precision training")
      .add("train.betas", std::vector<double>{0.9, 0.999}, "Adam betas")
      .add("decode.stop", std::vector<std::string>{}, "stop strings");
  return schema;
}

constexpr std::string_view kTrainToml = R"(# a run
[model]
layers = 12
name = "base"

[train]
learning_rate = 3e-4
steps = 20000
)";

std::string error_of(const auto& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "no strata::Error thrown";
  return {};
}

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("learning", "lerning"), 1u);
  EXPECT_EQ(edit_distance("train", "trian"), 1u);  // one swap, not two substitutions
  EXPECT_EQ(edit_distance("abc", "abc"), 0u);
}

TEST(EditDistance, ClosestMatchSuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> keys = {"train.learning_rate", "train.steps", "model.layers"};
  EXPECT_EQ(closest_match("train.lerning_rate", keys), "train.learning_rate");
  EXPECT_EQ(closest_match("trian.steps", keys), "train.steps");
  EXPECT_EQ(closest_match("decode.beam_size", keys), std::nullopt);
  EXPECT_EQ(closest_match("x", {}), std::nullopt);
}

TEST(Config, ReadsTypedValuesFromAFile) {
  const fs::path path = write_temp("train.toml", kTrainToml);
  Config config = Config::from_toml_file(path);
  config.validate(training_schema());
  EXPECT_EQ(config.get<std::int64_t>("model.layers"), 12);
  EXPECT_EQ(config.get<std::string>("model.name"), "base");
  EXPECT_DOUBLE_EQ(config.get<double>("train.learning_rate"), 3e-4);
  EXPECT_EQ(config.get<std::int64_t>("train.steps"), 20000);
  fs::remove(path);
}

TEST(Config, UnsetKeysTakeTheSchemaDefaults) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.validate(training_schema());
  EXPECT_EQ(config.get<bool>("train.fp16"), false);
  EXPECT_EQ(config.get<std::int64_t>("model.encoder.heads"), 8);
  EXPECT_EQ(config.get<std::vector<std::int64_t>>("data.buckets"),
            (std::vector<std::int64_t>{512, 1024}));
  EXPECT_TRUE(config.get<std::vector<std::string>>("decode.stop").empty());
}

TEST(Config, OverridesOfEachTypeReplaceFileValues) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.apply_override("train.learning_rate=1e-5");
  config.apply_override("train.steps = 7");
  config.apply_override("train.fp16=true");
  config.apply_override(R"(model.name="with spaces")");
  config.apply_override("data.path=runs/other");  // not TOML: a bare string
  config.apply_override("data.buckets=[128, 256, 4096]");
  config.apply_override("train.betas=[0.8, 1]");
  config.apply_override(R"(decode.stop=["</s>", "\n"])");
  config.validate(training_schema());
  EXPECT_DOUBLE_EQ(config.get<double>("train.learning_rate"), 1e-5);
  EXPECT_EQ(config.get<std::int64_t>("train.steps"), 7);
  EXPECT_TRUE(config.get<bool>("train.fp16"));
  EXPECT_EQ(config.get<std::string>("model.name"), "with spaces");
  EXPECT_EQ(config.get<std::string>("data.path"), "runs/other");
  EXPECT_EQ(config.get<std::vector<std::int64_t>>("data.buckets"),
            (std::vector<std::int64_t>{128, 256, 4096}));
  EXPECT_EQ(config.get<std::vector<double>>("train.betas"), (std::vector<double>{0.8, 1.0}));
  EXPECT_EQ(config.get<std::vector<std::string>>("decode.stop"),
            (std::vector<std::string>{"</s>", "\n"}));
}

TEST(Config, OverrideCreatesANestedKeyTheSchemaKnows) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  EXPECT_FALSE(config.contains("model.encoder.heads"));
  config.apply_override("model.encoder.heads=16");
  config.validate(training_schema());
  EXPECT_EQ(config.get<std::int64_t>("model.encoder.heads"), 16);
}

TEST(Config, OverrideWithAnInlineTableSetsEachKey) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.apply_override("model={layers = 3, encoder = {heads = 2}}");
  config.validate(training_schema());
  EXPECT_EQ(config.get<std::int64_t>("model.layers"), 3);
  EXPECT_EQ(config.get<std::int64_t>("model.encoder.heads"), 2);
  EXPECT_EQ(config.get<std::string>("model.name"), "base");  // merged, not replaced
}

TEST(Config, IntegersAreAcceptedWhereFloatsAreDeclared) {
  Config config = Config::from_toml("[train]\nlearning_rate = 1\n", "t.toml");
  config.validate(training_schema());
  EXPECT_DOUBLE_EQ(config.get<double>("train.learning_rate"), 1.0);
  EXPECT_NE(config.to_toml().find("learning_rate = 1.0"), std::string::npos);
}

TEST(Config, MalformedOverrideIsAnError) {
  Config config;
  EXPECT_NE(error_of([&] { config.apply_override("train.steps"); }).find("expected KEY=VALUE"),
            std::string::npos);
  EXPECT_NE(error_of([&] { config.apply_override("=3"); }).find("dotted path"), std::string::npos);
  EXPECT_NE(error_of([&] { config.apply_override("train..steps=3"); }).find("dotted path"),
            std::string::npos);
}

TEST(Config, AKeyCannotBeBothAValueAndATable) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  EXPECT_NE(error_of([&] { config.apply_override("train=3"); }).find("table"), std::string::npos);
  EXPECT_NE(error_of([&] { config.apply_override("train.steps.max=3"); }).find("not a table"),
            std::string::npos);
}

TEST(Config, UnknownKeyInAFileNamesItsLineAndTheClosestKnownKey) {
  const fs::path path = write_temp("typo.toml", "[train]\nsteps = 5\nlerning_rate = 0.1\n");
  Config config = Config::from_toml_file(path);
  EXPECT_EQ(error_of([&] { config.validate(training_schema()); }),
            path.string() +
                ":3: unknown key 'train.lerning_rate' (did you mean 'train.learning_rate'?)");
  fs::remove(path);
}

TEST(Config, UnknownKeyFromAnOverrideSaysSo) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.apply_override("trian.steps=5");
  EXPECT_EQ(error_of([&] { config.validate(training_schema()); }),
            "override: unknown key 'trian.steps' (did you mean 'train.steps'?)");
}

TEST(Config, UnknownKeyFarFromEveryKnownKeyGetsNoSuggestion) {
  Config config;
  config.apply_override("optimizer.kind=adam");
  EXPECT_EQ(error_of([&] { config.validate(training_schema()); }),
            "override: unknown key 'optimizer.kind'");
}

TEST(Config, WrongTypeNamesTheKeyAndTheExpectedType) {
  Config from_file = Config::from_toml("[train]\n\nsteps = \"many\"\n", "t.toml");
  EXPECT_EQ(error_of([&] { from_file.validate(training_schema()); }),
            "t.toml:3: field 'train.steps': expected integer, got string");
  Config overridden;
  overridden.apply_override("train.learning_rate=fast");
  EXPECT_EQ(error_of([&] { overridden.validate(training_schema()); }),
            "override: field 'train.learning_rate': expected float, got string");
  Config floats_for_ints;
  floats_for_ints.apply_override("data.buckets=[1.5]");
  EXPECT_NE(error_of([&] { floats_for_ints.validate(training_schema()); })
                .find("expected array of integers, got array of floats"),
            std::string::npos);
}

TEST(Config, GetOfAnotherTypeIsAnError) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  EXPECT_EQ(error_of([&] { config.get<bool>("train.steps"); }),
            "train.toml:8: field 'train.steps': expected boolean, got integer");
  EXPECT_NE(error_of([&] { config.get<bool>("train.nothing"); }).find("not set"), std::string::npos);
}

TEST(Config, MalformedTomlNamesLineAndColumn) {
  const fs::path path = write_temp("broken.toml", "[train]\nsteps = 5\nlr = = 3\n");
  const std::string message = error_of([&] { Config::from_toml_file(path); });
  EXPECT_EQ(message.rfind(path.string() + ":3:", 0), 0u) << message;
  fs::remove(path);
}

TEST(Config, MixedArraysAndDatesAreRejectedWithTheirLine) {
  EXPECT_EQ(error_of([] { Config::from_toml("a = 1\nb = [1, \"x\"]\n", "m.toml"); })
                .rfind("m.toml:2: field 'b':", 0),
            0u);
  EXPECT_NE(error_of([] { Config::from_toml("when = 1979-05-27\n", "d.toml"); }).find("dates"),
            std::string::npos);
}

TEST(Config, EffectiveTomlRoundTrips) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.apply_override(R"(model.name="quote \" and ünïcode")");
  config.apply_override("train.learning_rate=0.1");
  config.apply_override(R"(decode.stop=["tab\there", "bell\u0007", "back\\slash"])");
  config.validate(training_schema());
  const std::string printed = config.to_toml();
  Config reread = Config::from_toml(printed, "printed.toml");
  reread.validate(training_schema());
  EXPECT_EQ(reread, config) << printed;
  EXPECT_EQ(reread.to_toml(), printed);
  EXPECT_NE(printed.find("[model.encoder]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("heads = 8"), std::string::npos) << printed;
  // Floats print as the shortest text that reads back exactly, not with 17 digits.
  EXPECT_NE(printed.find("learning_rate = 0.1\n"), std::string::npos) << printed;
}

TEST(Config, EffectiveTomlOfAnEmptyArrayReadsBackAsTheDeclaredType) {
  Config config;
  config.validate(training_schema());
  Config reread = Config::from_toml(config.to_toml(), "printed.toml");
  reread.validate(training_schema());
  EXPECT_EQ(reread, config);
}

TEST(Config, EqualityComparesValues) {
  Config a = Config::from_toml("x = 1\n", "a.toml");
  Config b;
  b.apply_override("x=1");
  EXPECT_EQ(a, b);
  b.apply_override("x=2");
  EXPECT_FALSE(a == b);
}

TEST(Config, JsonNestsTables) {
  Config config = Config::from_toml(kTrainToml, "train.toml");
  config.validate(training_schema());
  const nlohmann::json json = config.to_json();
  EXPECT_EQ(json["model"]["layers"], 12);
  EXPECT_EQ(json["model"]["encoder"]["heads"], 8);
  EXPECT_DOUBLE_EQ(json["train"]["learning_rate"].get<double>(), 3e-4);
  EXPECT_EQ(json["train"]["fp16"], false);
  EXPECT_EQ(json["data"]["buckets"], nlohmann::json({512, 1024}));
}

TEST(ConfigSchema, RejectsDuplicateAndNestedDeclarations) {
  ConfigSchema schema;
  schema.add("train.steps", std::int64_t{1}, "steps");
  EXPECT_THROW(schema.add("train.steps", std::int64_t{2}, "again"), std::invalid_argument);
  EXPECT_THROW(schema.add("train", true, "a table already"), std::invalid_argument);
  EXPECT_THROW(schema.add("train.steps.max", true, "under a value"), std::invalid_argument);
  EXPECT_THROW(schema.add("bad key", true, "not bare"), std::invalid_argument);
  EXPECT_EQ(schema.find("train.steps")->help, "steps");
  EXPECT_EQ(schema.find("train.nothing"), nullptr);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(ConfigJson, FromJsonInvertsToJson) {
  Config config = Config::from_toml(
      "[model]\nlayers = 3\nname = \"x\"\n[train]\nlr = 0.5\nfreeze = [\"a*\", \"b\"]\nsteps = [1, 2]\n"
      "[train.inner]\nflag = true\n",
      "run.toml");
  const Config back = Config::from_json(config.to_json(), "config.json");
  EXPECT_TRUE(back == config);
  EXPECT_EQ(back.get<std::vector<std::string>>("train.freeze"), (std::vector<std::string>{"a*", "b"}));
  EXPECT_THROW(Config::from_json(nlohmann::json{{"a", nullptr}}, "config.json"), Error);
}

}  // namespace
}  // namespace strata
