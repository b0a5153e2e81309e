#pragma once
// Training text for small models that play the chain's roles. No large language model can be
// prompted few-shot here, so the thesis's information-flow claim (does an answer bottleneck
// beat giving the translator the context?) is tested by training (thesis-spec §4.3): each role
// learns its step from documents that are the step's zero-shot prompt in Appendix C's layout
// followed by the right completion, e.g. for the chain's last step
//   S: Use kill to stop it.\nQ: Is "kill" the user command (1) or the system call (2)?\nU: 1\nA: kill - send a signal to a process\n
// so that at test time the same prompt (a prompt file with no exemplars) asks for the same line.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "strata/chain/chain_examples.h"

namespace strata::chain {

enum class ChainStep { kNoExtra, kWithContext, kAsk, kUser, kTranslate };

// "no_extra", "with_context", "ask", "user", "translate"; strata::Error naming the choices.
ChainStep parse_chain_step(std::string_view name);
std::string_view chain_step_name(ChainStep step);

// strata::Error naming the example when it lacks a field the step writes or reads (the
// question for ask and translate, the answer for user and translate).
std::string chain_training_text(ChainStep step, const ChainExample& example);

// Every example of `data` (read as read_chain_examples reads it, for `language`) through
// every step, written to `out` as JSON Lines {"id": "<id>/<step>", "text": ...}, the shape
// `strata lm train` reads, atomically. Returns the number of documents.
std::size_t write_chain_training_docs(const std::filesystem::path& data, const std::string& language,
                                      const std::vector<ChainStep>& steps, const std::filesystem::path& out);

}  // namespace strata::chain
