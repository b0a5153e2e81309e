#pragma once
// The few-shot prompts of interactive chain prompting (thesis ch. 4, Appendix C), as a data
// file a user edits rather than code. The chain's three steps and its two baselines each have
// their instruction line, and all share one list of exemplars written as Appendix C writes
// them, one "S:/C:/Q:/U:/A:" line per field (S source, C context, Q the translator's question,
// U the user's answer, A the translation):
//
//   # comments start with '#'
//   [ask]            step 1, the translator asks: S → Q
//   [web] Given sentence 'S' to translate to French, ask clarifying questions 'Q' ...
//   [user]           step 2, the user answers from the context: S, C, Q → U
//   [translate]      step 3, the translator translates: S, Q, U → A (never C: with C it is
//                    the WithContext baseline, the thesis's LLMwCXT)
//   [no-extra]       baseline NoExtra: S → A
//   [with-context]   baseline WithContext: S, C → A
//   [exemplars]
//   S: This is for you, too.
//   C: Pierre hands his grandmother a present.
//   Q: "you" can be neutral, formal, informal. Who does "you" refer to?
//   U: formal
//   A: Ceci est pour vous.
//
// Exemplars are separated by blank lines; a line without a tag continues the field above it.
// Every prompt lists all exemplars in the fields its step reads, then the new input with the
// field to write left open ("Q:", "U:" or "A:"); the model's answer is its first line.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace strata::chain {

struct ChainExemplar {
  std::string source, context, question, answer, translation;  // S, C, Q, U, A
};

struct ChainPrompts {
  std::string ask, user, translate, no_extra, with_context;  // instruction lines ("" = none)
  std::vector<ChainExemplar> exemplars;
};

// strata::Error naming the file, line and field for an unknown section or tag, a field given
// twice in an exemplar, or an exemplar missing S or A. Exemplars without Q and U (or C) only
// serve the prompts that do not read them; rendering a prompt that needs them is an error.
ChainPrompts parse_chain_prompts(std::string_view text, const std::filesystem::path& file);
ChainPrompts read_chain_prompts(const std::filesystem::path& file);

std::string ask_prompt(const ChainPrompts& p, std::string_view source);
std::string user_prompt(const ChainPrompts& p, std::string_view source, std::string_view context,
                        std::string_view question);
std::string translate_prompt(const ChainPrompts& p, std::string_view source, std::string_view question,
                             std::string_view answer);
std::string no_extra_prompt(const ChainPrompts& p, std::string_view source);
std::string with_context_prompt(const ChainPrompts& p, std::string_view source, std::string_view context);

// A completion's answer: its first line, trimmed.
std::string first_line(std::string_view completion);

}  // namespace strata::chain
