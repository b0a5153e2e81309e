// The chain's prompt files: parsed with errors that point at the line, and rendered so that
// each step shows exactly the fields the thesis gives it (the translator never sees C).
#include <gtest/gtest.h>

#include <string>

#include "strata/chain/chain_prompts.h"
#include "strata/core/error.h"

namespace strata::chain {
namespace {

const char* const kPrompts = R"(# two exemplars, French
[ask]
[web] Given sentence 'S' to translate to French, ask clarifying questions 'Q':
[user]
[web] Answer question 'Q' about sentence 'S' from its context 'C':
[translate]
[web] Given answer 'U' to question 'Q', provide the French translation 'A' of sentence 'S':
[no-extra]
[web] Translate 'S' to French:
[with-context]
[web] Translate 'S' to French given its context 'C':
[exemplars]
S: This is for you, too.
C: Pierre hands his grandmother a present.
Q: "you" can be neutral, formal, informal. Who does "you" refer to?
U: formal
A: Ceci est pour vous
   aussi.

S: Where is the bank?
C: We walked along the river.
Q: "bank" can be a river bank or a financial institution. Which one?
U: river
A: Où est la rive ?
)";

ChainPrompts parsed() { return parse_chain_prompts(kPrompts, "p.txt"); }

TEST(ChainPrompts, SectionsAndExemplarsAreRead) {
  const ChainPrompts p = parsed();
  EXPECT_EQ(p.ask, "[web] Given sentence 'S' to translate to French, ask clarifying questions 'Q':");
  ASSERT_EQ(p.exemplars.size(), 2u);
  EXPECT_EQ(p.exemplars[0].answer, "formal");
  EXPECT_EQ(p.exemplars[0].translation, "Ceci est pour vous\naussi.");  // a continued field
  EXPECT_EQ(p.exemplars[1].context, "We walked along the river.");
}

TEST(ChainPrompts, EachStepShowsOnlyItsFields) {
  const ChainPrompts p = parsed();
  const std::string ask = ask_prompt(p, "Did you see it?");
  EXPECT_TRUE(ask.starts_with(p.ask + "\nS: This is for you, too.\nQ: \"you\""));
  EXPECT_TRUE(ask.ends_with("\n\nS: Did you see it?\nQ:"));
  EXPECT_EQ(ask.find("C: "), std::string::npos);
  EXPECT_EQ(ask.find("A: "), std::string::npos);

  const std::string user = user_prompt(p, "Did you see it?", "Marie asks her boss.", "Who is \"you\"?");
  EXPECT_NE(user.find("C: Pierre hands"), std::string::npos);
  EXPECT_TRUE(user.ends_with("S: Did you see it?\nC: Marie asks her boss.\nQ: Who is \"you\"?\nU:"));
  EXPECT_EQ(user.find("A: "), std::string::npos);

  // The translator's last step reads S, Q and U, never the context.
  const std::string translate = translate_prompt(p, "Did you see it?", "Who is \"you\"?", "formal");
  EXPECT_EQ(translate.find("C: "), std::string::npos);
  EXPECT_EQ(translate.find("Marie"), std::string::npos);
  EXPECT_TRUE(translate.ends_with("S: Did you see it?\nQ: Who is \"you\"?\nU: formal\nA:"));

  const std::string direct = no_extra_prompt(p, "Hi.");
  EXPECT_EQ(direct, p.no_extra + "\nS: This is for you, too.\nA: Ceci est pour vous\naussi.\n\n"
                                 "S: Where is the bank?\nA: Où est la rive ?\n\nS: Hi.\nA:");
  EXPECT_TRUE(with_context_prompt(p, "Hi.", "At work.").ends_with("S: Hi.\nC: At work.\nA:"));
}

TEST(ChainPrompts, AnswersAreTheFirstLine) {
  EXPECT_EQ(first_line("  Ceci est pour vous.\nS: next"), "Ceci est pour vous.");
  EXPECT_EQ(first_line("\n\nformal  "), "formal");
  EXPECT_EQ(first_line(""), "");
}

std::string error_of(const std::string& text) {
  try {
    parse_chain_prompts(text, "p.txt");
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ChainPrompts, MistakesNameTheLineAndField) {
  EXPECT_NE(error_of("[asking]\nx\n").find("p.txt:1"), std::string::npos);
  EXPECT_NE(error_of("[exemplars]\nS: a\nS: b\nA: c\n").find("p.txt:3: field 'S'"), std::string::npos)
      << error_of("[exemplars]\nS: a\nS: b\nA: c\n");
  EXPECT_NE(error_of("[exemplars]\nS: a\nQ: q\n\nS: b\nA: c\n").find("p.txt:2: field 'A'"), std::string::npos);
  EXPECT_NE(error_of("[exemplars]\nhello\n").find("p.txt:2"), std::string::npos);
  EXPECT_NE(error_of("stray\n[ask]\n").find("p.txt:1"), std::string::npos);
}

TEST(ChainPrompts, APromptNeedsItsFieldsInEveryExemplar) {
  const ChainPrompts p = parse_chain_prompts("[exemplars]\nS: a\nA: b\n", "p.txt");
  EXPECT_NO_THROW(no_extra_prompt(p, "x"));
  EXPECT_THROW(ask_prompt(p, "x"), Error);  // no Q:
  EXPECT_THROW(with_context_prompt(p, "x", "c"), Error);  // no C:
}

}  // namespace
}  // namespace strata::chain
