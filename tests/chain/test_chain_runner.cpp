// The chain and its baselines over fake backends: each step sees exactly the fields it should
// (the translator never sees the context in the chain), the perfect user, corruption, the
// response cache across runs and crashes, concurrency, and the scores.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "strata/chain/chain_runner.h"
#include "strata/chain/chain_scores.h"
#include "strata/chain/response_cache.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata::chain {
namespace {

namespace fs = std::filesystem;

// The field `tag` of the last (open) block of a rendered prompt: "S: x" -> x.
std::string field(const std::string& prompt, char tag) {
  const std::string marker = std::string("\n") + tag + ": ";
  const std::size_t at = ("\n" + prompt).rfind(marker);
  if (at == std::string::npos) return "";
  const std::size_t start = at + marker.size() - 1;
  return prompt.substr(start, prompt.find('\n', start) - start);
}

// Answers by rule and records every prompt: asked for Q it asks about S; asked for U it reads
// the answer off the context ("... means X"); asked for A it writes "S [U]" (or "S [C]" when
// given the context directly), then a second line that must be dropped.
class RuleBackend : public ChainBackend {
 public:
  std::string complete(const CompletionCall& call) override {
    ++calls;
    {
      const std::lock_guard lock(mutex);
      prompts.push_back(call.prompt);
    }
    const std::string& p = call.prompt;
    if (p.ends_with("Q:")) return " which sense of '" + field(p, 'S') + "'?\nignored";
    if (p.ends_with("U:")) {
      const std::string context = field(p, 'C');
      return " " + context.substr(context.rfind(' ') + 1);
    }
    const std::string hint = !field(p, 'U').empty() ? field(p, 'U') : field(p, 'C');
    return " " + field(p, 'S') + (hint.empty() ? "" : " [" + hint.substr(hint.rfind(' ') + 1) + "]") + "\nsecond line";
  }
  std::string identity() const override { return "rules"; }

  std::atomic<int> calls{0};
  std::mutex mutex;
  std::vector<std::string> prompts;
};

std::vector<ChainExample> examples(int n) {
  const char* senses[] = {"one", "two", "three"};
  std::vector<ChainExample> out;
  for (int i = 0; i < n; ++i) {
    ChainExample e;
    e.id = "ex" + std::to_string(i);
    e.source = "word" + std::to_string(i);
    e.answer = senses[i % 3];
    e.context = "SECRET context where it means " + e.answer;
    e.reference = e.source + " [" + e.answer + "]";
    e.label = e.answer;
    out.push_back(e);
  }
  return out;
}

ChainRunOptions options(double corrupt = 0, std::size_t concurrency = 1) {
  ChainRunOptions o;
  o.corrupt = corrupt;
  o.concurrency = concurrency;
  o.quiet = true;
  return o;
}

TEST(ChainRunner, EachStepSeesOnlyItsFields) {
  RuleBackend translator, user;
  const auto data = examples(6);
  const ChainPrompts prompts;  // zero-shot: the layout without exemplars
  const auto outputs = run_chain_system(ChainSystem::kChain, data, prompts, translator, &user, options());
  ASSERT_EQ(outputs.size(), 6u);
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(outputs[i].question, "which sense of '" + data[i].source + "'?");  // first line only
    EXPECT_EQ(outputs[i].user_answer, data[i].answer);
    EXPECT_EQ(outputs[i].translation, data[i].reference);
    EXPECT_FALSE(outputs[i].corrupted);
  }
  // The translator asked and translated (2 calls each) and never saw the context.
  EXPECT_EQ(translator.calls, 12);
  for (const std::string& prompt : translator.prompts) EXPECT_EQ(prompt.find("SECRET"), std::string::npos) << prompt;
  ASSERT_EQ(user.calls, 6);
  for (const std::string& prompt : user.prompts) {
    EXPECT_NE(prompt.find("SECRET"), std::string::npos);
    EXPECT_TRUE(prompt.ends_with("U:"));
  }
}

TEST(ChainRunner, BaselinesSeeTheContextOrNot) {
  const auto data = examples(3);
  RuleBackend plain, with_context;
  const auto none = run_chain_system(ChainSystem::kNoExtra, data, {}, plain, nullptr, options());
  const auto direct = run_chain_system(ChainSystem::kWithContext, data, {}, with_context, nullptr, options());
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(none[i].translation, data[i].source);
    EXPECT_EQ(direct[i].translation, data[i].reference);
    EXPECT_TRUE(none[i].question.empty());
  }
  for (const std::string& prompt : plain.prompts) EXPECT_EQ(prompt.find("SECRET"), std::string::npos);
  for (const std::string& prompt : with_context.prompts) EXPECT_NE(prompt.find("SECRET"), std::string::npos);
}

TEST(ChainRunner, PerfectUserAnswersWithTheKnownAnswer) {
  RuleBackend translator;
  auto data = examples(4);
  const auto outputs = run_chain_system(ChainSystem::kChain, data, {}, translator, nullptr, options());
  for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(outputs[i].answer, data[i].answer);
  data[2].answer.clear();
  EXPECT_THROW(run_chain_system(ChainSystem::kChain, data, {}, translator, nullptr, options()), Error);
}

TEST(ChainRunner, CorruptionReplacesTheShareAskedWithWrongAnswersInNestedSets) {
  RuleBackend translator;
  const auto data = examples(300);
  std::set<std::string> at10, at30;
  for (const double share : {0.1, 0.3}) {
    const auto outputs = run_chain_system(ChainSystem::kChain, data, {}, translator, nullptr, options(share));
    std::size_t corrupted = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (!outputs[i].corrupted) {
        EXPECT_EQ(outputs[i].answer, data[i].answer);
        continue;
      }
      ++corrupted;
      EXPECT_NE(outputs[i].answer, data[i].answer);
      EXPECT_EQ(outputs[i].user_answer, data[i].answer);  // what the user said is kept
      EXPECT_NE(outputs[i].translation, data[i].reference);
      (share < 0.2 ? at10 : at30).insert(data[i].id);
    }
    EXPECT_NEAR(static_cast<double>(corrupted) / 300, share, 0.06);
  }
  for (const std::string& id : at10) EXPECT_TRUE(at30.contains(id)) << id;
  // With one known answer there is nothing wrong to give.
  auto same = examples(3);
  for (auto& e : same) e.answer = "one";
  EXPECT_THROW(run_chain_system(ChainSystem::kChain, same, {}, translator, nullptr, options(0.5)), Error);
}

TEST(ChainRunner, ConcurrencyGivesTheSameOutputs) {
  RuleBackend a, b;
  const auto data = examples(40);
  const auto serial = run_chain_system(ChainSystem::kChain, data, {}, a, &a, options(0.3, 1));
  const auto parallel = run_chain_system(ChainSystem::kChain, data, {}, b, &b, options(0.3, 4));
  for (std::size_t i = 0; i < data.size(); ++i) {
    EXPECT_EQ(serial[i].translation, parallel[i].translation);
    EXPECT_EQ(serial[i].corrupted, parallel[i].corrupted);
  }
}

class FailingBackend : public ChainBackend {
 public:
  std::string complete(const CompletionCall&) override { throw Error("backend down"); }
  std::string identity() const override { return "down"; }
};

TEST(ChainRunner, BackendFailureStopsTheRun) {
  FailingBackend down;
  EXPECT_THROW(run_chain_system(ChainSystem::kNoExtra, examples(20), {}, down, nullptr, options(0, 3)), Error);
}

class ResponseCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_chain_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ResponseCacheTest, ASecondRunAsksNothing) {
  const auto data = examples(5);
  RuleBackend first_model;
  std::vector<ChainOutput> first;
  {
    ResponseCache cache(first_model, dir_ / "cache.jsonl");
    first = run_chain_system(ChainSystem::kChain, data, {}, cache, &cache, options());
    EXPECT_EQ(cache.misses(), 15u);
    EXPECT_EQ(cache.hits(), 0u);
  }
  RuleBackend second_model;
  ResponseCache cache(second_model, dir_ / "cache.jsonl");
  const auto second = run_chain_system(ChainSystem::kChain, data, {}, cache, &cache, options());
  EXPECT_EQ(second_model.calls, 0);
  EXPECT_EQ(cache.hits(), 15u);
  for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(first[i].translation, second[i].translation);
  // Another call (a different max_tokens) is a miss.
  CompletionCall call;
  call.prompt = "S: word0\nA:";
  call.max_tokens = 7;
  cache.complete(call);
  EXPECT_EQ(second_model.calls, 1);
}

TEST_F(ResponseCacheTest, AHalfWrittenLastLineIsDroppedAndADamagedLineIsAnError) {
  fs::create_directories(dir_);
  RuleBackend model;
  CompletionCall call;
  call.prompt = "S: hello\nA:";
  {
    ResponseCache cache(model, dir_ / "c.jsonl");
    cache.complete(call);
  }
  { std::ofstream(dir_ / "c.jsonl", std::ios::app) << R"({"key": "abc", "respo)"; }
  {
    ResponseCache cache(model, dir_ / "c.jsonl");  // drops the half line, keeps the first
    EXPECT_EQ(cache.complete(call), " hello\nsecond line");
    EXPECT_EQ(model.calls, 1);
  }
  const std::string kept = read_file(dir_ / "c.jsonl");
  EXPECT_EQ(kept.find("respo\"") , std::string::npos);
  EXPECT_TRUE(kept.ends_with("\n"));
  write_file_atomic(dir_ / "bad.jsonl", "not json\n{\"key\": \"k\", \"response\": \"r\"}\n");
  try {
    ResponseCache cache(model, dir_ / "bad.jsonl");
    FAIL() << "a damaged line was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.jsonl:1"), std::string::npos) << e.what();
  }
}

TEST(ChainScores, ScoresAndComparisons) {
  const auto data = examples(60);
  std::vector<ChainOutput> right(60), wrong(60);
  for (std::size_t i = 0; i < 60; ++i) {
    right[i].translation = data[i].reference;
    right[i].question = "q";
    right[i].answer = data[i].answer;
    wrong[i].translation = data[i].source + " [none]";
  }
  const ChainScoreOptions options;
  const nlohmann::json good = score_chain_system(data, right, options);
  EXPECT_DOUBLE_EQ(good["bleu"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(good["chrf"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(good["exact_match"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(good["answer_accuracy"].get<double>(), 100.0);
  EXPECT_EQ(good["answered_examples"], 60);
  const nlohmann::json bad = score_chain_system(data, wrong, options);
  EXPECT_LT(bad["bleu"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(bad["exact_match"].get<double>(), 0.0);
  EXPECT_FALSE(bad.contains("answer_accuracy"));
  const nlohmann::json compared = compare_chain_systems(data, right, wrong, options);
  EXPECT_LT(compared["bleu"]["p_value"].get<double>(), 0.01);
  EXPECT_LT(compared["exact_match"]["p_value"].get<double>(), 0.01);
  // Every example right against every one wrong: each resample's difference is 100.
  EXPECT_DOUBLE_EQ(compared["exact_match"]["difference_low"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(compared["exact_match"]["difference_high"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(compare_chain_systems(data, right, right, options)["chrf"]["p_value"].get<double>(), 1.0);
  EXPECT_THROW(score_chain_system(data, std::vector<ChainOutput>(3), options), Error);
}

TEST(ChainScores, FormalityAndListScoresApplyWhereLabelled) {
  std::vector<ChainExample> data(3);
  // id, source, context, reference, question, answer, label, type
  data[0] = {"f", "Do you have your ticket?", "", "Avez-vous votre billet ?", "", "formal", "formal", "formality"};
  data[1] = {"i", "Do you have your ticket?", "", "As-tu ton billet ?", "", "informal", "informal", "formality"};
  data[2] = {"p", "bank", "", "rive", "", "", "", "polysemy"};
  std::vector<ChainOutput> outputs(3);
  // C.1.6's French rules: formal needs an -ez verb, vous and votre.
  outputs[0].translation = "Vous avez votre billet ?";  // formal: right
  outputs[1].translation = "Avez-vous votre billet ?";  // formal: wrong
  outputs[2].translation = "banque, rive, berge";
  ChainScoreOptions options;
  options.language = "fr";
  const nlohmann::json scores = score_chain_system(data, outputs, options);
  EXPECT_DOUBLE_EQ(scores["formality_accuracy"].get<double>(), 50.0);
  EXPECT_EQ(scores["formality_examples"], 2);
  EXPECT_DOUBLE_EQ(scores["hit@1"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(scores["hit@3"].get<double>(), 100.0);
  // "rive" is the second item: BLEU@1 and chrF@1 read "banque" alone, @3 find it exactly.
  EXPECT_LT(scores["bleu@1"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(scores["bleu@3"].get<double>(), 100.0);
  EXPECT_LT(scores["chrf@1"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(scores["chrf@3"].get<double>(), 100.0);
  EXPECT_EQ(scores["list_examples"], 1);
}

}  // namespace
}  // namespace strata::chain
