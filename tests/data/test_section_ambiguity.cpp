#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/data/manpage_corpus.h"
#include "strata/data/section_ambiguity.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

TEST(StripSectionReferences, RemovesOnlyTheNamesOwnSections) {
  EXPECT_EQ(strip_section_references("Use printf(3) or printf(3p), not fprintf(3) or printf(1).", "printf"),
            "Use printf or printf, not fprintf(3) or printf.");
  EXPECT_EQ(strip_section_references("snprintf(3) and printf (3) stay", "printf"), "snprintf(3) and printf (3) stay");
  EXPECT_EQ(strip_section_references("kill(2)", "kill"), "kill");
  EXPECT_EQ(strip_section_references("no reference here", "kill"), "no reference here");
}

TEST(SectionQuestion, NamesEachSectionsRoleAndJoinsTheLastWithOr) {
  EXPECT_EQ(section_question("kill", {"1", "2"}), "Is \"kill\" the user command (1) or the system call (2)?");
  EXPECT_EQ(section_question("stat", {"1", "2", "3"}),
            "Is \"stat\" the user command (1), the system call (2) or the library function (3)?");
  EXPECT_THROW(section_question("x", {"1", "n"}), Error);
}

// A man root where kill lives in sections 1 and 2 (with a French page for kill(1) only) and
// 30 tool pages cite both, each in sentences of its own.
class SectionAmbiguityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("strata_ambig_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    for (const char* dir : {"man1", "man2", "fr/man1"}) fs::create_directories(root_ / dir);
    write("man1/kill.1",
          ".TH KILL 1\n.SH NAME\nkill \\- send a signal to a process\n.SH DESCRIPTION\n"
          "The kill(1) command sends the given signal to each process named.\n");
    write("man2/kill.2",
          ".TH KILL 2\n.SH NAME\nkill \\- send signal to a process\n.SH DESCRIPTION\n"
          "Users usually reach this call through the kill(1) shell command instead.\n");
    write("fr/man1/kill.1",
          ".TH KILL 1\n.SH NOM\nkill \\- envoyer un signal à un processus\n.SH DESCRIPTION\nTexte.\n");
    for (int i = 0; i < 30; ++i) write("man1/tool" + std::to_string(i) + ".1", tool_page(i));
    write("man1/copy.1", tool_page(0));       // tool0's text installed a second time
    write("man1/alias.1", ".so man1/tool1.1\n");  // not scanned
    write("man1/ls.1", ".TH LS 1\n.SH NAME\nls \\- list\n.SH DESCRIPTION\nNothing about signals here at all.\n");
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::string tool_page(int i) {
    const std::string n = std::to_string(i);
    return ".TH TOOL" + n + " 1\n.SH NAME\ntool" + n + " \\- tool number " + n +
           "\n.SH DESCRIPTION\n"
           "Tool " + n + " stops its workers with kill(1) when the shell asks for it.\n"
           "Workers of tool " + n + " receive a signal by the kill(2) system call, see ls(1).\n"
           ".PP\nSee kill(1).\n"
           ".PP\nThe helpers kill(1) and kill(2) are both used by tool " + n + " here.\n"
           ".SH SEE ALSO\nkill(1), kill(2)\n";
  }
  void write(const std::string& relative, const std::string& text) { std::ofstream(root_ / relative) << text; }

  SectionAmbiguityOptions options() const {
    SectionAmbiguityOptions o;
    o.man_root = root_;
    o.languages = {"fr"};
    o.validation_percent = 0;
    o.test_percent = 40;
    o.quiet = true;
    return o;
  }
  fs::path root_;
};

TEST_F(SectionAmbiguityTest, OneRecordPerMentionWithTheSectionStrippedAndTheTargetsOfItsSense) {
  const fs::path out = root_ / "out";
  const nlohmann::json stats = build_section_ambiguity(options(), out);

  EXPECT_EQ(stats["ambiguous_names"], 1);
  EXPECT_EQ(stats["names"]["kill"], nlohmann::json::array({"1", "2"}));
  EXPECT_EQ(stats["pages_skipped"]["alias"], 1);
  // Per tool page (31 with the copy): 2 kept, "See kill(1)." too short, one sentence citing
  // both senses; kill(1)'s own mention of itself; kill(2)'s mention of kill(1) is kept.
  EXPECT_EQ(stats["mentions_found"], 31 * 4 + 2);
  EXPECT_EQ(stats["mentions_skipped"]["short_sentence"], 31);
  EXPECT_EQ(stats["mentions_skipped"]["two_sections_in_sentence"], 31);
  EXPECT_EQ(stats["mentions_skipped"]["self_mention"], 1);
  EXPECT_EQ(stats["mentions_skipped"]["duplicate"], 2);  // the copy's two mentions
  EXPECT_EQ(stats["senses_with_target"]["en"], 2);
  EXPECT_EQ(stats["senses_with_target"]["fr"], 1);

  std::map<std::string, nlohmann::json> by_id;
  std::size_t examples = 0;
  for (const char* split : {"train", "validation", "test"}) {
    const auto lines = read_jsonl(out / (std::string(split) + ".jsonl"));
    EXPECT_EQ(stats["splits"][split]["examples"], lines.size()) << split;
    examples += lines.size();
    for (const auto& line : lines) {
      // A tool page's mentions go where split_of puts the page (split_of keys a page by its lower-case name).
      const std::string id = line["id"];
      if (id.rfind("man1/tool", 0) == 0) {
        const std::string number = id.substr(9, id.find('.') - 9);
        EXPECT_EQ(split_of("tool" + number, 0, 40), split) << id;
      }
      by_id[line["id"]] = line;
    }
  }
  EXPECT_EQ(examples, 30 * 2 + 1);
  EXPECT_GT(stats["splits"]["train"]["examples"].get<std::size_t>(), 0u);
  EXPECT_GT(stats["splits"]["test"]["examples"].get<std::size_t>(), 0u);

  // Sentence 1 of paragraph 2 (NAME's is paragraph 1) of tool3: kill(1), stripped.
  const nlohmann::json& first = by_id.at("man1/tool3.1:kill:2.1");
  EXPECT_EQ(first["source"], "Tool 3 stops its workers with kill when the shell asks for it.");
  EXPECT_EQ(first["answer"], "1");
  EXPECT_EQ(first["section"], "1");
  EXPECT_EQ(first["question"], "Is \"kill\" the user command (1) or the system call (2)?");
  EXPECT_EQ(first["targets"]["en"], "kill - send a signal to a process");
  EXPECT_EQ(first["targets"]["fr"], "kill - envoyer un signal \u00e0 un processus");
  // The context is the paragraph: the other sentence, its kill(2) stripped, other names kept.
  const std::string context = first["context"];
  EXPECT_NE(context.find("receive a signal by the kill system call, see ls(1)."), std::string::npos) << context;
  EXPECT_EQ(context.find("kill("), std::string::npos) << context;

  const nlohmann::json& second = by_id.at("man1/tool3.1:kill:2.2");
  EXPECT_EQ(second["answer"], "2");
  EXPECT_EQ(second["targets"]["en"], "kill - send signal to a process");
  EXPECT_FALSE(second["targets"].contains("fr"));  // no French kill(2) installed
}

TEST_F(SectionAmbiguityTest, CutsALongContextToTheSentencesNearestTheMention) {
  std::string roff = ".TH LONG 1\n.SH NAME\nlong \\- a long page\n.SH DESCRIPTION\n";
  for (int k = 1; k <= 9; ++k)
    roff += k == 5 ? "Here the long page stops a job with kill(2) right away.\n"
                   : "Filler sentence number " + std::to_string(k) + " speaks about nothing much at all.\n";
  write("man1/long.1", roff);
  SectionAmbiguityOptions o = options();
  o.max_context_words = 35;  // the mention's 11 words and one 10-word sentence each side
  const nlohmann::json stats = build_section_ambiguity(o, root_ / "out");
  EXPECT_EQ(stats["contexts_cut"], 1);
  bool found = false;
  for (const char* split : {"train", "validation", "test"})
    for (const auto& line : read_jsonl(root_ / "out" / (std::string(split) + ".jsonl")))
      if (line["id"] == "man1/long.1:kill:2.5") {
        found = true;
        EXPECT_EQ(line["context"],
                  "Filler sentence number 4 speaks about nothing much at all. Here the long page stops a job with kill "
                  "right away. Filler sentence number 6 speaks about nothing much at all.");
      }
  EXPECT_TRUE(found);
}

TEST_F(SectionAmbiguityTest, CapsMentionsPerSenseInEachSplit) {
  SectionAmbiguityOptions o = options();
  o.max_per_sense = 2;
  const nlohmann::json stats = build_section_ambiguity(o, root_ / "out");
  for (const char* split : {"train", "test"})
    for (const auto& [answer, count] : stats["splits"][split]["answers"].items()) EXPECT_LE(count.get<int>(), 2);
  EXPECT_GT(stats["dropped"]["max_per_sense"].get<int>(), 0);
}

TEST_F(SectionAmbiguityTest, ClearErrorsAndNothingWritten) {
  SectionAmbiguityOptions o = options();
  o.man_root = root_ / "missing";
  EXPECT_THROW(build_section_ambiguity(o, root_ / "out"), Error);
  o = options();
  o.test_percent = 90;
  o.validation_percent = 20;
  EXPECT_THROW(build_section_ambiguity(o, root_ / "out"), Error);
  fs::remove(root_ / "man2" / "kill.2");  // no name lives in two sections now
  EXPECT_THROW(build_section_ambiguity(options(), root_ / "out"), Error);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

}  // namespace
}  // namespace strata
