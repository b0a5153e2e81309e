// Thesis ch. 2's TLM sequences: the parts of a man page, the markers, the budgets that keep
// the summary in the first window, the windows, and where the extract block comes from.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/data/tlm_examples.h"
#include "strata/doc/dataset.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

using test_support::error_of;

// A word tokenizer that knows the four markers.
class MarkedWords : public test_support::WordTokenizer {
 public:
  MarkedWords() { encode("[INTRO] [EXTRACT] [SUMMARY] [REST]"); }
};

Document page() {
  DocumentBuilder b("scp(1)");
  b.open_section("SYNOPSIS", 1);
  b.add_paragraph("scp source target");
  b.open_section("DESCRIPTION", 1);
  b.add_paragraph("scp copies files between hosts. It uses ssh.");
  b.open_section("OPTIONS", 1);
  b.add_paragraph("-r copies directories.");
  Document d = b.finish();
  d.id = "scp.1";
  d.summary = "secure copy between hosts";
  return d;
}

std::string pieces(const Tokenizer& tokenizer, const std::vector<std::int32_t>& ids) { return tokenizer.decode(ids); }

TEST(TlmParts, TheIntroSectionsThenTheRestOrTheWholeDocument) {
  const Document d = page();
  const TlmParts parts = tlm_parts(d, {"synopsis", "Description"});
  EXPECT_EQ(parts.intro, "scp source target\n\nscp copies files between hosts. It uses ssh.");
  EXPECT_EQ(parts.rest, "-r copies directories.");
  const TlmParts whole = tlm_parts(d, {"EXAMPLES"});
  EXPECT_EQ(whole.intro, d.text);
  EXPECT_EQ(whole.rest, "");
  EXPECT_EQ(tlm_parts(d, {}).intro, d.text);
}

TEST(TlmSequence, IntroExtractSummaryRestInThatOrder) {
  MarkedWords words;
  const TlmMarkers markers = tlm_markers(words);
  TlmFormat format;
  const std::vector<std::string> extract{"scp copies files between hosts.", "It uses ssh."};
  EXPECT_EQ(pieces(words, tlm_sequence(page(), &extract, words, format, markers)),
            "[INTRO] scp source target scp copies files between hosts. It uses ssh. "
            "[EXTRACT] scp copies files between hosts. It uses ssh. "
            "[SUMMARY] secure copy between hosts [REST] -r copies directories. </s>");
  // Without extracts there is no extract block; without the rest the summary ends at [REST].
  format.with_rest = false;
  EXPECT_EQ(pieces(words, tlm_sequence(page(), nullptr, words, format, markers)),
            "[INTRO] scp source target scp copies files between hosts. It uses ssh. "
            "[SUMMARY] secure copy between hosts [REST] </s>");
}

TEST(TlmSequence, BudgetsCutEachPartAndThePromptKeepsWhatTheModelRead) {
  MarkedWords words;
  const TlmMarkers markers = tlm_markers(words);
  TlmFormat format;
  format.intro_tokens = 2;
  format.extract_tokens = 3;
  format.summary_tokens = 1;
  format.with_rest = false;
  const std::vector<std::string> extract{"scp copies files between hosts."};
  EXPECT_EQ(pieces(words, tlm_sequence(page(), &extract, words, format, markers)),
            "[INTRO] scp source [EXTRACT] scp copies files [SUMMARY] secure [REST] </s>");
  const TlmPrompt prompt = tlm_prompt(tlm_parts(page(), format.intro_sections), &extract, words, format, markers);
  EXPECT_EQ(pieces(words, prompt.ids), "[INTRO] scp source [EXTRACT] scp copies files [SUMMARY]");
  EXPECT_EQ(pieces(words, prompt.intro), "scp source");
  EXPECT_EQ(pieces(words, prompt.extract), "scp copies files");
}

TEST(TlmFormat, BudgetsMustFitOneWindowWithTheMarkers) {
  TlmFormat format;
  format.window = 10;
  format.intro_tokens = 3;
  format.extract_tokens = 2;
  format.summary_tokens = 1;
  EXPECT_NO_THROW(format.check());  // 3 + 2 + 1 + 4 markers = 10
  format.summary_tokens = 2;
  EXPECT_NE(error_of([&] { format.check(); }).find("more than a window of 10"), std::string::npos);
  format.summary_tokens = 0;
  EXPECT_NE(error_of([&] { format.check(); }).find("must be positive"), std::string::npos);
}

TEST(TlmMarkers, AMissingMarkerSaysHowToGetIt) {
  test_support::WordTokenizer words;
  words.encode("[INTRO] [SUMMARY]");
  const std::string message = error_of([&] { tlm_markers(words); });
  EXPECT_NE(message.find("lacks [EXTRACT] [REST]"), std::string::npos) << message;
  EXPECT_NE(message.find("--special"), std::string::npos) << message;
}

class TlmFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("strata_tlm_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  std::filesystem::path dir_;
};

TEST_F(TlmFiles, WindowsDoNotOverlapAndTheFirstHoldsTheSummary) {
  MarkedWords words;
  Document without_summary = page();
  without_summary.id = "none";
  without_summary.summary.clear();
  write_native_jsonl(dir_ / "pages.jsonl", {page(), without_summary});
  TlmFormat format;
  format.window = 12;
  format.intro_tokens = 4;
  format.extract_tokens = 2;
  format.summary_tokens = 2;
  const auto windows = load_tlm_windows(dir_ / "pages.jsonl", words, format, TlmExtracts::parse("gold"), false);
  std::vector<std::int32_t> all;
  for (const auto& w : windows) all.insert(all.end(), w.begin(), w.end());
  const std::vector<std::string> gold = *TlmExtracts::parse("gold").of(page());
  EXPECT_EQ(all, tlm_sequence(page(), &gold, words, format, tlm_markers(words)));  // the one with a summary
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].size(), 12u);
  EXPECT_EQ(pieces(words, windows[0]), "[INTRO] scp source target scp [EXTRACT] scp copies [SUMMARY] secure copy [REST]")
      << "the oracle's two sentences (scp copies files ..., -r copies ...) cut to 2 tokens";
  EXPECT_EQ(gold, (std::vector<std::string>{"scp copies files between hosts.", "-r copies directories."}));
}

TEST_F(TlmFiles, ExtractsFromAFileByIdWithErrorsNamingLineAndId) {
  const auto file = write("extracts.jsonl", "{\"id\": \"scp.1\", \"prediction\": \"It uses ssh.\\n-r copies directories.\"}\n");
  const TlmExtracts extracts = TlmExtracts::parse(file.string());
  EXPECT_EQ(*extracts.of(page()), (std::vector<std::string>{"It uses ssh.", "-r copies directories."}));
  Document other = page();
  other.id = "ls.1";
  EXPECT_NE(error_of([&] { extracts.of(other); }).find("no extract for document 'ls.1'"), std::string::npos);
  EXPECT_FALSE(TlmExtracts::parse("none").of(page()).has_value());
  const auto twice = write("twice.jsonl", "{\"id\": \"a\", \"prediction\": \"x\"}\n{\"id\": \"a\", \"prediction\": \"y\"}\n");
  const std::string message = error_of([&] { TlmExtracts::parse(twice.string()); });
  EXPECT_NE(message.find("twice.jsonl:2"), std::string::npos) << message;
  const auto missing = write("missing.jsonl", "{\"id\": \"a\"}\n");
  EXPECT_NE(error_of([&] { TlmExtracts::parse(missing.string()); }).find("prediction"), std::string::npos);
}

}  // namespace
}  // namespace strata
