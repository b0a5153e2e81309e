// The chain prompts shipped in configs/chain/ (thesis Appendix C, see its README.md): every
// file parses and renders all five prompts, has the thesis's exemplar count, keeps the
// context out of the prompts that must not see it, and carries the repaired answers (C.1's
// swapped "it" answers, C.8's empty formality answers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strata/chain/chain_prompts.h"

namespace strata::chain {
namespace {

namespace fs = std::filesystem;

// STRATA_FIXTURES_DIR is "<repo>/tests/fixtures".
fs::path chain_configs() { return fs::path(STRATA_FIXTURES_DIR).parent_path().parent_path() / "configs" / "chain"; }

std::vector<fs::path> shipped_files() {
  std::vector<fs::path> files;
  if (!fs::is_directory(chain_configs())) return files;
  for (const fs::directory_entry& entry : fs::directory_iterator(chain_configs()))
    if (entry.is_regular_file() && entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

bool is_generalist(const fs::path& file) { return file.stem().string().starts_with("generalist-"); }

// The exemplars each kind of file has in the thesis's Translator listings (C.4-C.9).
std::size_t expected_exemplars(const fs::path& file) {
  const std::string stem = file.stem().string();
  if (stem.starts_with("generalist-")) return 8;  // 3 polysemy, 3 formality, 2 "it"
  if (stem.starts_with("formality-")) return 6;   // C.6, C.8
  if (stem.starts_with("polysemy-")) return 5;    // C.7, C.9
  return 0;
}

const ChainExemplar* with_source(const ChainPrompts& p, std::string_view source) {
  for (const ChainExemplar& e : p.exemplars)
    if (e.source == source) return &e;
  return nullptr;
}

// "\"it\" is an umbrella." -> "umbrella"; "" for another kind of answer.
std::string it_referent(const std::string& answer) {
  constexpr std::string_view kLeads[] = {"\"it\" is an ", "\"it\" is a "};  // "an" first: "a" prefixes it
  for (const std::string_view lead : kLeads) {
    if (!answer.starts_with(lead)) continue;
    std::string noun = answer.substr(lead.size());
    if (!noun.empty() && noun.back() == '.') noun.pop_back();
    return noun;
  }
  return "";
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

constexpr std::string_view kSource = "Did you see it?";
constexpr std::string_view kContext = "Marie asks her boss about the report.";
constexpr std::string_view kQuestion = "\"you\" can be neutral, formal, informal. Who does \"you\" refer to?";
constexpr std::string_view kAnswer = "\"you\" is 'formal' since \"you\" refers to the speaker's boss.";

TEST(ShippedPrompts, TheThesisFilesAreThere) {
  ASSERT_TRUE(fs::is_directory(chain_configs())) << chain_configs();
  std::set<std::string> names;
  for (const fs::path& file : shipped_files()) names.insert(file.filename().string());
  for (const char* name : {"generalist-es.txt", "generalist-fr.txt", "formality-es.txt", "formality-fr.txt",
                           "polysemy-es.txt", "polysemy-fr.txt"})
    EXPECT_TRUE(names.count(name)) << name << " is missing from " << chain_configs();
}

TEST(ShippedPrompts, EveryFileRendersAllFivePrompts) {
  const std::vector<fs::path> files = shipped_files();
  ASSERT_FALSE(files.empty()) << "no .txt prompts under " << chain_configs();
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    const ChainPrompts p = read_chain_prompts(file);
    const std::size_t expected = expected_exemplars(file);
    EXPECT_NE(expected, 0u) << "unknown kind of prompt file: give its exemplar count here";
    EXPECT_EQ(p.exemplars.size(), expected);

    // Every step has the thesis's instruction line, PaLM's "[web]" prefix included.
    for (const std::string* instruction : {&p.ask, &p.user, &p.translate, &p.no_extra, &p.with_context}) {
      EXPECT_TRUE(instruction->starts_with("[web] ")) << *instruction;
      EXPECT_EQ(instruction->find('\n'), std::string::npos) << "an OCR line wrap left in: " << *instruction;
    }
    for (const ChainExemplar& e : p.exemplars) {
      for (const std::string* field : {&e.source, &e.context, &e.question, &e.answer, &e.translation}) {
        EXPECT_FALSE(field->empty()) << "exemplar \"" << e.source << "\" lacks a field";
        EXPECT_EQ(field->find('\n'), std::string::npos) << "an OCR line wrap left in: " << *field;
        EXPECT_FALSE(contains(*field, "\\'")) << "a Python escape left in: " << *field;
        EXPECT_FALSE(contains(*field, "%s")) << "a template placeholder left in: " << *field;
      }
    }

    std::string ask, user, translate, no_extra, with_context;
    EXPECT_NO_THROW(ask = ask_prompt(p, kSource));
    EXPECT_NO_THROW(user = user_prompt(p, kSource, kContext, kQuestion));
    EXPECT_NO_THROW(translate = translate_prompt(p, kSource, kQuestion, kAnswer));
    EXPECT_NO_THROW(no_extra = no_extra_prompt(p, kSource));
    EXPECT_NO_THROW(with_context = with_context_prompt(p, kSource, kContext));
    EXPECT_TRUE(ask.starts_with(p.ask + "\nS: ")) << ask;
    EXPECT_TRUE(ask.ends_with("\n\nS: " + std::string(kSource) + "\nQ:")) << ask;
    EXPECT_TRUE(user.ends_with("\n\nS: " + std::string(kSource) + "\nC: " + std::string(kContext) + "\nQ: " +
                               std::string(kQuestion) + "\nU:"))
        << user;
    EXPECT_TRUE(translate.ends_with("\n\nS: " + std::string(kSource) + "\nQ: " + std::string(kQuestion) +
                                    "\nU: " + std::string(kAnswer) + "\nA:"))
        << translate;
    EXPECT_TRUE(no_extra.ends_with("\n\nS: " + std::string(kSource) + "\nA:")) << no_extra;
    EXPECT_TRUE(with_context.ends_with("\n\nS: " + std::string(kSource) + "\nC: " + std::string(kContext) + "\nA:"))
        << with_context;
  }
}

// The translator asks and translates without the context (the thesis's step 3 sees S, Q and U
// only; with C it is the LLMwCXT baseline), and NoExtra has no context either.
TEST(ShippedPrompts, TheContextStaysOutOfTheTranslatorsPrompts) {
  for (const fs::path& file : shipped_files()) {
    SCOPED_TRACE(file.filename().string());
    const ChainPrompts p = read_chain_prompts(file);
    const std::string ask = ask_prompt(p, kSource);
    const std::string translate = translate_prompt(p, kSource, kQuestion, kAnswer);
    const std::string no_extra = no_extra_prompt(p, kSource);
    const std::string user = user_prompt(p, kSource, kContext, kQuestion);
    const std::string with_context = with_context_prompt(p, kSource, kContext);
    for (const ChainExemplar& e : p.exemplars) {
      ASSERT_FALSE(e.context.empty());
      EXPECT_FALSE(contains(translate, e.context)) << "translate prompt shows the context of \"" << e.source << "\"";
      EXPECT_FALSE(contains(ask, e.context)) << "ask prompt shows the context of \"" << e.source << "\"";
      EXPECT_FALSE(contains(no_extra, e.context)) << "no-extra prompt shows the context of \"" << e.source << "\"";
      EXPECT_TRUE(contains(user, "C: " + e.context + "\n"));
      EXPECT_TRUE(contains(with_context, "C: " + e.context + "\n"));
    }
    EXPECT_FALSE(contains(translate, "\nC: "));
    EXPECT_FALSE(contains(ask, "\nC: "));
    EXPECT_FALSE(contains(no_extra, "\nC: "));
  }
}

// C.1 answers "harp" for the umbrella context and "umbrella" for the harp one; the shipped
// generalist files answer each "it" with what its own context names.
TEST(ShippedPrompts, GeneralistItAnswersFollowTheirContext) {
  std::size_t generalists = 0;
  for (const fs::path& file : shipped_files()) {
    if (!is_generalist(file)) continue;
    ++generalists;
    SCOPED_TRACE(file.filename().string());
    const ChainPrompts p = read_chain_prompts(file);
    std::size_t it_exemplars = 0;
    for (const ChainExemplar& e : p.exemplars) {
      if (e.question != "What does \"it\" refer to?") continue;
      ++it_exemplars;
      const std::string noun = it_referent(e.answer);
      ASSERT_FALSE(noun.empty()) << "not an \"it\" answer: " << e.answer;
      EXPECT_TRUE(contains(e.context, noun)) << "\"" << e.source << "\": answer " << e.answer
                                             << " names nothing in its context: " << e.context;
    }
    EXPECT_EQ(it_exemplars, 2u);

    // The generalist prompts' sentences are all different (C.5 gave one sentence twice).
    std::set<std::string> sources;
    for (const ChainExemplar& e : p.exemplars) EXPECT_TRUE(sources.insert(e.source).second) << e.source;
  }
  EXPECT_EQ(generalists, 2u);
}

TEST(ShippedPrompts, TheSpanishGeneralistItAnswersAreUnswapped) {
  const ChainPrompts p = read_chain_prompts(chain_configs() / "generalist-es.txt");
  const ChainExemplar* umbrella = with_source(p, "It is also very pretty.");
  ASSERT_NE(umbrella, nullptr);
  EXPECT_TRUE(contains(umbrella->context, "umbrella"));
  EXPECT_EQ(umbrella->answer, "\"it\" is an umbrella.");
  EXPECT_EQ(umbrella->translation, "Es muy bonita tambien.");

  const ChainExemplar* harp = with_source(p, "can't they just build it on an angle?");
  ASSERT_NE(harp, nullptr);
  EXPECT_TRUE(contains(harp->context, "harp"));
  EXPECT_EQ(harp->answer, "\"it\" is a harp.");
  EXPECT_EQ(harp->translation, "no pueden hacerla en angulo?");
}

TEST(ShippedPrompts, TheFrenchGeneralistItAnswersAreUnswapped) {
  const ChainPrompts p = read_chain_prompts(chain_configs() / "generalist-fr.txt");
  const ChainExemplar* umbrella = with_source(p, "it is also very pretty.");
  ASSERT_NE(umbrella, nullptr);
  EXPECT_TRUE(contains(umbrella->context, "umbrella"));
  EXPECT_EQ(umbrella->answer, "\"it\" is an umbrella.");
  EXPECT_EQ(umbrella->translation, "il est aussi tres beau.");

  // C.5's 4th exemplar repeated the 6th's sentence; its answer and translation are these.
  const ChainExemplar* jerry = with_source(p, "To whom have you been talking?");
  ASSERT_NE(jerry, nullptr);
  EXPECT_TRUE(contains(jerry->answer, "\"Jerry\""));
  EXPECT_EQ(jerry->translation, "A qui as-tu parle ?");
}

// C.8 leaves every U: of the French formality exemplars empty; each formality exemplar of
// every file answers with one of the question's three registers.
TEST(ShippedPrompts, FormalityAnswersNameARegister) {
  for (const fs::path& file : shipped_files()) {
    SCOPED_TRACE(file.filename().string());
    const ChainPrompts p = read_chain_prompts(file);
    for (const ChainExemplar& e : p.exemplars) {
      if (!e.question.starts_with("\"you\"")) continue;
      EXPECT_TRUE(e.answer.starts_with("\"you\" is 'formal'") || e.answer.starts_with("\"you\" is 'informal'") ||
                  e.answer.starts_with("\"you\" is 'neutral'"))
          << "\"" << e.source << "\": " << e.answer;
    }
  }
  const ChainPrompts fr = read_chain_prompts(chain_configs() / "formality-fr.txt");
  const ChainExemplar* freya = with_source(fr, "This is for you, too.");
  ASSERT_NE(freya, nullptr);
  EXPECT_TRUE(freya->answer.starts_with("\"you\" is 'formal'")) << freya->answer;
  EXPECT_EQ(freya->translation, "Ceci est pour vous.");
}

}  // namespace
}  // namespace strata::chain
