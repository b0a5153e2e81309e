// The chain's data and config files: what they accept, and errors that name the file, line
// and field for what they do not.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "strata/chain/chain_examples.h"
#include "strata/chain/chain_job.h"
#include "strata/chain/chain_training.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata::chain {
namespace {

namespace fs = std::filesystem;

class ChainFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_chain_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    write_file_atomic(dir_ / name, text);
    return dir_ / name;
  }
  std::string error_of(const std::function<void()>& run) {
    try {
      run();
    } catch (const Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(ChainFilesTest, ReadsExamplesWithReferencesOrTargets) {
  const fs::path data = write("d.jsonl",
                              R"({"id": "a", "source": "kill it", "context": "c", "reference": "tue-le", "answer": 1}
{"source": "printf it", "targets": {"en": "printf - format", "fr": "printf - formater"}, "answer": "3", "type": "section"}
{"source": "stat it", "targets": {"en": "stat - display"}}
)");
  const ChainData fr = read_chain_examples(data, "fr");
  ASSERT_EQ(fr.examples.size(), 2u);
  EXPECT_EQ(fr.skipped_without_target, 1u);
  EXPECT_EQ(fr.examples[0].id, "a");
  EXPECT_EQ(fr.examples[0].answer, "1");  // a number is read as its text
  EXPECT_EQ(fr.examples[0].label, "1");   // the label defaults to the answer
  EXPECT_EQ(fr.examples[1].id, "line-2");
  EXPECT_EQ(fr.examples[1].reference, "printf - formater");
  EXPECT_EQ(fr.examples[1].type, "section");
  EXPECT_EQ(read_chain_examples(data, "en").examples.size(), 3u);
  // Record "a" has a reference for every language; without it, no record has a German target.
  const fs::path targets_only = write("t.jsonl", R"({"source": "stat it", "targets": {"en": "stat - display"}}
)");
  EXPECT_NE(error_of([&] { read_chain_examples(targets_only, "de"); }).find("1 records have no 'de' target"),
            std::string::npos);
}

TEST_F(ChainFilesTest, BadExamplesNameTheLineAndField) {
  const fs::path no_source = write("a.jsonl", "{\"source\": \"x\", \"reference\": \"y\"}\n{\"reference\": \"y\"}\n");
  const std::string missing = error_of([&] { read_chain_examples(no_source, "fr"); });
  EXPECT_NE(missing.find("a.jsonl:2"), std::string::npos) << missing;
  EXPECT_NE(missing.find("source"), std::string::npos) << missing;
  const fs::path no_reference = write("b.jsonl", "{\"source\": \"x\"}\n");
  EXPECT_NE(error_of([&] { read_chain_examples(no_reference, "fr"); }).find("reference"), std::string::npos);
}

TEST_F(ChainFilesTest, ReadsAJobWithPathsBesideIt) {
  const fs::path config = write("chain.toml", R"([chain]
prompts = "p.txt"
language = "de"
systems = ["chain", "no_extra"]
corrupt = [0.0, 0.3]
cache = "cache.jsonl"
[translator]
url = "http://127.0.0.1:9/v1"
model = "m"
[user]
gold = true
[with_context]
run = "runs/wc"
)");
  const ChainJob job = read_chain_job(config, {"chain.seed=4"});
  EXPECT_EQ(job.prompts, dir_ / "p.txt");
  EXPECT_EQ(job.cache, dir_ / "cache.jsonl");
  EXPECT_EQ(job.language, "de");
  ASSERT_EQ(job.systems.size(), 2u);
  EXPECT_EQ(job.systems[0], ChainSystem::kChain);
  EXPECT_EQ(job.corrupt, (std::vector<double>{0.0, 0.3}));
  EXPECT_EQ(job.run.seed, 4u);
  EXPECT_EQ(job.translator.url, "http://127.0.0.1:9/v1");
  EXPECT_TRUE(job.user.gold);
  EXPECT_EQ(job.with_context.run, dir_ / "runs/wc");  // this system's own translator
  EXPECT_TRUE(job.no_extra.run.empty() && job.no_extra.url.empty());  // the translator's
}

TEST_F(ChainFilesTest, BadJobsAreRefusedByName) {
  const std::string base = "[chain]\nprompts = \"p.txt\"\n[translator]\nurl = \"http://x/v1\"\n";
  const auto refused = [&](const std::string& extra, const std::vector<std::string>& overrides = {}) {
    const fs::path config = write("bad.toml", base + extra);
    return error_of([&] { read_chain_job(config, overrides); });
  };
  EXPECT_NE(refused("run = \"r\"\n").find("url, run or gold"), std::string::npos);
  EXPECT_NE(refused("", {"chain.systems=[\"chain\", \"best\"]"}).find("unknown chain system 'best'"), std::string::npos);
  EXPECT_NE(refused("", {"chain.corrupt=[1.0]"}).find("outside [0, 1)"), std::string::npos);
  EXPECT_NE(refused("", {"translator.temperture=1"}).find("temperture"), std::string::npos);
  EXPECT_NE(refused("[user]\nrun = \"r\"\ngold = true\n").find("[user]"), std::string::npos);
  const fs::path no_backend = write("nb.toml", "[chain]\nprompts = \"p.txt\"\n");
  EXPECT_NE(error_of([&] { read_chain_job(no_backend, {}); }).find("[translator] needs url"), std::string::npos);
}

TEST_F(ChainFilesTest, TrainingTextIsTheZeroShotPromptThenTheAnswer) {
  ChainExample e;
  e.id = "k";
  e.source = "Use kill to stop it.";
  e.context = "SECRET the shell builtin";
  e.question = "Is \"kill\" the user command (1) or the system call (2)?";
  e.answer = "1";
  e.reference = "kill - send a signal to a process";
  EXPECT_EQ(chain_training_text(ChainStep::kTranslate, e),
            "S: Use kill to stop it.\nQ: Is \"kill\" the user command (1) or the system call (2)?\nU: 1\n"
            "A: kill - send a signal to a process\n");
  EXPECT_EQ(chain_training_text(ChainStep::kNoExtra, e), "S: Use kill to stop it.\nA: kill - send a signal to a process\n");
  EXPECT_EQ(chain_training_text(ChainStep::kUser, e).find("SECRET") != std::string::npos, true);
  EXPECT_TRUE(chain_training_text(ChainStep::kUser, e).ends_with("U: 1\n"));
  EXPECT_TRUE(chain_training_text(ChainStep::kAsk, e).ends_with("(2)?\n"));
  EXPECT_EQ(chain_training_text(ChainStep::kWithContext, e).find("C: SECRET"), std::string("S: Use kill to stop it.\n").size());
  e.question.clear();
  EXPECT_NE(error_of([&] { chain_training_text(ChainStep::kAsk, e); }).find("no question"), std::string::npos);
  EXPECT_NE(error_of([] { parse_chain_step("answer"); }).find("unknown chain step"), std::string::npos);

  const fs::path data = write("t.jsonl", R"({"id": "a", "source": "s", "context": "c", "question": "q?", "answer": "1", "targets": {"fr": "t"}}
)");
  EXPECT_EQ(write_chain_training_docs(data, "fr", {ChainStep::kAsk, ChainStep::kTranslate}, dir_ / "docs.jsonl"), 2u);
  EXPECT_EQ(read_file(dir_ / "docs.jsonl"),
            "{\"id\":\"a/ask\",\"text\":\"S: s\\nQ: q?\\n\"}\n"
            "{\"id\":\"a/translate\",\"text\":\"S: s\\nQ: q?\\nU: 1\\nA: t\\n\"}\n");
}

}  // namespace
}  // namespace strata::chain
